import { existsSync } from "node:fs";
import { join } from "node:path";
import {
  type ConformanceTarget,
  connectZero,
  NativeClient,
  pokePartsOf,
  until,
  zeroSecProtocol,
} from "@weir/conformance";
import { describe, expect, it } from "vitest";
import WebSocket from "ws";
import { startChildServer } from "../test/child-server.js";
import { conformanceServer } from "../test/conformance-server.js";
import { tempDir } from "../test/helpers.js";
import type { NodeHostOptions } from "./index.js";

const HOUR_MS = 3_600_000;

function start(dataDir: string, options: Partial<NodeHostOptions> = {}) {
  return conformanceServer({ dataDir, ...options });
}

/** Waits out the last seconds of a window, so a test's spends fall in one. */
async function awayFromWindowEdge(windowMs: number): Promise<void> {
  const left = windowMs - (Date.now() % windowMs);
  if (left < 10_000) await new Promise((resolve) => setTimeout(resolve, left + 50));
}

const openNamespaces = async (url: string) =>
  Number(/^weir_open_namespaces (\d+)$/m.exec(await (await fetch(`${url}/metrics`)).text())?.[1]);

describe("authorizeNamespace", () => {
  it("refuses with 403 before the namespace is opened or created, sockets included", async () => {
    const dataDir = tempDir();
    const { target } = await start(dataDir, {
      authorizeNamespace: (claims, namespace) =>
        !namespace.startsWith("private-") || namespace === `private-${claims.userID}`,
    });
    try {
      const refused = await new NativeClient(target, "private-bob", "alice").pull();
      expect(refused.status).toBe(403);
      expect(refused.json).toMatchObject({ error: "forbidden", message: expect.any(String) });
      expect(existsSync(join(dataDir, "private-bob.sqlite"))).toBe(false);
      expect((await new NativeClient(target, "private-alice", "alice").pull()).status).toBe(200);
      const socket = new WebSocket(`${target.url.replace("http", "ws")}/private-bob/wake?clientID=c`, {
        headers: { authorization: "alice" },
      });
      const status = await new Promise<number>((resolve) => {
        socket.once("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
        socket.once("open", () => resolve(101));
      });
      expect(status).toBe(403);
    } finally {
      await target.close();
    }
  });
});

describe("the cap on open namespaces", () => {
  it("closes the least recently used idle namespace to open another", async () => {
    const { target } = await start(tempDir(), { maxOpenNamespaces: 3 });
    try {
      const clients = ["a", "b", "c", "d", "e"].map((ns) => new NativeClient(target, `cap-${ns}`, "alice"));
      for (const client of clients) {
        expect((await client.push([{ name: "createTodo", args: { id: client.ns } }])).status).toBe(200);
        expect(await openNamespaces(target.url)).toBeLessThanOrEqual(3);
      }
      // The first ones were closed, not lost.
      for (const client of clients) {
        await client.sync();
        expect([...client.rows.values()].map((row) => row.id)).toEqual([client.ns]);
      }
    } finally {
      await target.close();
    }
  });
});

describe("the quota of new namespaces", () => {
  it("answers 429 with Retry-After past the day's count, across restarts and processes", async () => {
    const dataDir = tempDir();
    const quotas = { newNamespacesPerDay: 3 };
    let { target } = await start(dataDir, { quotas });
    for (const ns of ["new-1", "new-2", "new-3"])
      expect((await new NativeClient(target, ns, "alice").pull()).status).toBe(200);
    const refused = await new NativeClient(target, "new-4", "alice").pull();
    expect(refused.status).toBe(429);
    expect(refused.json).toMatchObject({ error: "namespace_quota", message: expect.any(String) });
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(existsSync(join(dataDir, "new-4.sqlite"))).toBe(false);
    // Namespaces that exist cost nothing; another user has a count of their own.
    expect((await new NativeClient(target, "new-1", "alice").pull()).status).toBe(200);
    expect((await new NativeClient(target, "new-4", "bob").pull()).status).toBe(200);
    expect((await new NativeClient(target, "new-4", "alice").pull()).status).toBe(200);
    await target.close();

    ({ target } = await start(dataDir, { quotas }));
    const other = await start(dataDir, { quotas });
    try {
      expect((await new NativeClient(target, "new-5", "alice").pull()).status).toBe(429);
      expect((await new NativeClient(other.target, "new-6", "alice").pull()).status).toBe(429);
    } finally {
      await target.close();
      await other.target.close();
    }
  });
});

describe("the quota of new namespaces, for a Zero connect", () => {
  it("refuses the connect on its socket with Zero's ServerOverloaded and the Retry-After as backoff", async () => {
    const dataDir = tempDir();
    const { target } = await start(dataDir, { quotas: { newNamespacesPerDay: 1 } });
    try {
      const first = await connectZero(target.url, "zq-1", { user: "alice" });
      await first.next("pokeEnd");
      first.ws.close();
      // The upgrade is answered (101): the refusal arrives as Zero's error message.
      const refused = await connectZero(target.url, "zq-2", { user: "alice" });
      expect(await refused.next("error")).toMatchObject({
        kind: "ServerOverloaded",
        origin: "zeroCache",
        minBackoffMs: expect.any(Number),
      });
      expect((await refused.closed).code).toBe(1002);
      expect(existsSync(join(dataDir, "zq-2.sqlite"))).toBe(false);
    } finally {
      await target.close();
    }
  });
});

describe("weighted request quotas", () => {
  const quotas = { requestUnits: 30, windowMs: HOUR_MS };

  it("charge a push more than a caught-up pull, and answer 429 with Retry-After once spent", async () => {
    await awayFromWindowEdge(HOUR_MS);
    const { target } = await start(tempDir(), { quotas });
    try {
      const alice = new NativeClient(target, "weighted", "alice");
      expect((await alice.push([{ name: "createTodo", args: { id: "t1" } }])).status).toBe(200); // 10 + 1
      await alice.sync(); // a reset (5), then a caught-up pull (1): 17
      let admitted = 0;
      let refused: Awaited<ReturnType<NativeClient["pull"]>> | undefined;
      while (!refused && admitted < 100) {
        const answer = await alice.pull();
        if (answer.status === 200) admitted++;
        else refused = answer;
      }
      // Caught-up pulls cost 1 each: 13 more fit under 30, and the 13th reaches it.
      expect(admitted).toBe(13);
      expect(refused!.status).toBe(429);
      expect(refused!.json).toMatchObject({ error: "rate_limited", message: expect.any(String) });
      const retryAfter = Number(refused!.headers.get("retry-after"));
      expect(retryAfter).toBeGreaterThan(0);
      expect(retryAfter).toBeLessThanOrEqual((2 * HOUR_MS) / 1000);
      // Pushes are refused too; other users are not.
      expect((await alice.push([{ name: "createTodo", args: { id: "t2" } }])).status).toBe(429);
      expect((await new NativeClient(target, "weighted", "bob").pull()).status).toBe(200);
    } finally {
      await target.close();
    }
  });

  it("charge a pull 1 more for each 1,000 rows it answers: a reset of many rows costs more", async () => {
    await awayFromWindowEdge(HOUR_MS);
    // 3,000 todos of alice's own, in six pushes (6 × 10 + 3,000), leave her 90 of 3,150 units.
    const { target } = await start(tempDir(), { quotas: { requestUnits: 3_150, windowMs: HOUR_MS } });
    try {
      const alice = new NativeClient(target, "rows", "alice");
      for (let push = 0; push < 6; push++) {
        const todos = Array.from({ length: 500 }, (_, i) => ({
          name: "createTodo",
          args: { id: `t${push * 500 + i}` },
        }));
        expect((await alice.push(todos)).status).toBe(200);
      }
      // Each pull from no cookie, in a group of its own, answers the 3,000 rows: 5 + 3 units.
      let admitted = 0;
      for (let group = 0; admitted < 100; group++) {
        const answer = await new NativeClient(target, "rows", "alice", `reset-${group}`).pull();
        if (answer.status !== 200) {
          expect(answer.status).toBe(429);
          break;
        }
        expect(answer.json.rowsPatch).toHaveLength(3_001);
        admitted++;
      }
      // 12 fit under 3,100 at 8 units each (18 would at 5).
      expect(admitted).toBe(12);
    } finally {
      await target.close();
    }
  });

  it("charge a Zero socket's pushes, and refuse one past the budget as Zero's rate limit", async () => {
    await awayFromWindowEdge(HOUR_MS);
    const { target } = await start(tempDir(), { quotas });
    try {
      const socket = await connectZero(target.url, "weighted-zero", { group: "zg", user: "alice" });
      await socket.next("connected");
      const push = (id: number) =>
        socket.ws.send(
          JSON.stringify([
            "push",
            {
              clientGroupID: "zg",
              mutations: [
                {
                  type: "custom",
                  id,
                  clientID: "c1",
                  name: "createTodo",
                  args: [{ id: `z${id}` }],
                  timestamp: 1,
                },
              ],
              pushVersion: 1,
              timestamp: 1,
              requestID: `r${id}`,
            },
          ]),
        );
      // 11 units each, admitted while under 30: three go through, the fourth is refused.
      for (let id = 1; id <= 4; id++) push(id);
      await until(() => socket.messages.some((m) => m[0] === "error"));
      expect(socket.messages.find((m) => m[0] === "error")![1]).toMatchObject({
        kind: "MutationRateLimited",
      });
      // The three are applied (their ids reach the socket's pokes), the fourth is not.
      const acknowledged = () =>
        Math.max(
          0,
          ...pokePartsOf(socket).map(
            (part) => (part.lastMutationIDChanges as Record<string, number> | undefined)?.c1 ?? 0,
          ),
        );
      await until(() => acknowledged() === 3);
      // Other users are not refused.
      expect((await new NativeClient(target, "weighted-zero", "bob").pull()).status).toBe(200);
      // The socket stays open, and its user's HTTP requests are refused too.
      expect(socket.ws.readyState).toBe(socket.ws.OPEN);
      const refused = await new NativeClient(target, "weighted-zero", "alice").pull();
      expect(refused.status).toBe(429);
      expect(acknowledged()).toBe(3);
      socket.ws.close();
    } finally {
      await target.close();
    }
  });

  it("charge a Zero connection's first queries: connecting again and again with them is refused once spent", async () => {
    await awayFromWindowEdge(HOUR_MS);
    const { target } = await start(tempDir(), { quotas });
    try {
      const patch = Array.from({ length: 20 }, (_, i) => ({
        op: "put",
        hash: `h${i}`,
        name: "doneTodos",
        args: [],
      }));
      const connect = (user: string) =>
        connectZero(target.url, "weighted-connect", {
          user,
          protocol: zeroSecProtocol(["initConnection", { desiredQueriesPatch: patch }], user),
        });
      // 5 and 20 units each (a change of queries and its 20 operations), admitted while under
      // 30: two are served, the third is refused.
      let served = 0;
      let refusal: unknown;
      while (served < 10 && refusal === undefined) {
        const socket = await connect("alice");
        const answer = await Promise.race([
          socket.next("pokeEnd").then(() => "served" as const),
          socket.next("error"),
        ]);
        if (answer === "served") served++;
        else refusal = answer;
        socket.ws.close();
      }
      expect(served).toBe(2);
      expect(refusal).toMatchObject({ kind: "ServerOverloaded", minBackoffMs: expect.any(Number) });
      // Another user connects with the same queries.
      const bob = await connect("bob");
      await bob.next("pokeEnd");
      bob.ws.close();
    } finally {
      await target.close();
    }
  });

  it("hold across a restart and across processes sharing the data directory", async () => {
    await awayFromWindowEdge(HOUR_MS);
    const dataDir = tempDir();
    const first = await start(dataDir, { quotas });
    const child = await startChildServer(dataDir, "todo-server.mjs", { WEIR_QUOTAS: JSON.stringify(quotas) });
    const second: ConformanceTarget = { url: child.url, auth: (user) => user, close: async () => {} };
    try {
      // 11 + 5 + 1 in this process, then 11 in the other one: 28 of 30.
      const alice = new NativeClient(first.target, "shared-a", "alice");
      expect((await alice.push([{ name: "createTodo", args: { id: "t1" } }])).status).toBe(200);
      await alice.sync();
      const elsewhere = new NativeClient(second, "shared-b", "alice");
      // Spends reach the shared store within 100 ms.
      await new Promise((resolve) => setTimeout(resolve, 250));
      expect((await elsewhere.push([{ name: "createTodo", args: { id: "t2" } }])).status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 250));
      expect((await alice.pull()).status).toBe(200); // 29
      expect((await alice.pull()).status).toBe(200); // 30
      expect((await alice.pull()).status).toBe(429);
      await new Promise((resolve) => setTimeout(resolve, 250));
      expect((await elsewhere.pull()).status).toBe(429);
    } finally {
      await first.target.close();
      child.child.kill("SIGTERM");
      await child.exited;
    }
    const restarted = await start(dataDir, { quotas });
    try {
      expect((await new NativeClient(restarted.target, "shared-a", "alice").pull()).status).toBe(429);
      expect((await new NativeClient(restarted.target, "shared-a", "bob").pull()).status).toBe(200);
    } finally {
      await restarted.target.close();
    }
  });
});
