import { UpstreamCallError } from "@weir/protocol";
import { describe, expect, it } from "vitest";
import { ScriptedUpstream } from "../../test/scripted-upstream.js";
import { headerUser, memoryStorage, memoryStore, send, testHost } from "../../test/test-host.js";
import type { WeirConfig } from "../config/weir-config.js";
import type { WeirHost } from "../host/weir-host.js";
import { partsFromRequest } from "../http/http-parts.js";
import type { UpstreamConfig } from "./upstream-config.js";

const NOTIFY = { authorization: "Bearer notify-token" };
const ADMIN = { "x-admin-key": "admin-key-1" };

function config(upstream: ScriptedUpstream, options: Partial<UpstreamConfig> = {}): WeirConfig {
  return {
    schema: { tables: { item: { columns: { id: "string", n: "integer" }, primaryKey: ["id"] } } },
    mutators: {
      setItem(tx, args: { id: string; n: number }) {
        tx.upsert("item", args);
      },
    },
    authenticate: headerUser,
    adminKey: "admin-key-1",
    upstream: { source: upstream, notifyToken: "notify-token", freshnessMs: 60_000, ...options },
  };
}

async function setup(options: Partial<UpstreamConfig> = {}, wakeSockets = () => 0) {
  const upstream = new ScriptedUpstream();
  const woken: Array<string | null> = [];
  // Kept open across hosts, as a file is.
  const store = { ...memoryStore(), close: () => {} };
  const host = await testHost(config(upstream, options), {
    storage: memoryStorage(() => store),
    wake: {
      send: (_ns, _audience, except) => {
        woken.push(except);
        return 1;
      },
      count: wakeSockets,
      probes: () => new Map(),
    },
  });
  let cookie: unknown = null;
  const pull = async (user = "alice") => {
    const answer = await send(host, "POST", "/ns/pull", {
      user,
      body: { clientGroupID: `g-${user}`, clientID: `c-${user}`, cookie },
    });
    cookie = answer.json.cookie;
    return answer;
  };
  const status = async () => (await send(host, "GET", "/ns/admin/status", { headers: ADMIN })).json.upstream;
  return { upstream, host, woken, store, pull, status };
}

const notify = (host: WeirHost, body?: unknown, headers: Record<string, string> = NOTIFY) =>
  send(host, "POST", "/ns/notify", { headers, ...(body === undefined ? {} : { body }) });

describe("a namespace with an upstream", () => {
  it("applies what the upstream committed before answering a notify, and wakes the clients", async () => {
    const { upstream, host, woken, pull } = await setup();
    upstream.commit([{ id: "a", n: 1 }]);
    const first = await notify(host);
    expect(first).toMatchObject({ status: 200, json: { watermark: "1", applied: 1, outcome: "complete" } });
    expect((await pull()).json.rowsPatch).toEqual([
      { op: "clear" },
      { op: "put", tableName: "item", value: { id: "a", n: 1 } },
    ]);

    upstream.commit([
      { id: "a", n: 2 },
      { id: "b", n: 3 },
    ]);
    const second = await notify(host, { watermark: 2 });
    expect(second.json).toEqual({ watermark: "2", applied: 2, outcome: "complete" });
    expect((await pull()).json.rowsPatch).toEqual([
      { op: "put", tableName: "item", value: { id: "a", n: 2 } },
      { op: "put", tableName: "item", value: { id: "b", n: 3 } },
    ]);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(woken.length).toBeGreaterThan(0);
    await host.close();
  });

  it("answers a notify whose watermark the cursor reached without calling the upstream", async () => {
    const { upstream, host, status } = await setup();
    upstream.commit([{ id: "a", n: 1 }]);
    await notify(host);
    const attempts = (await status()).attempts;
    expect(await notify(host, { watermark: 1 })).toMatchObject({
      status: 200,
      json: { watermark: "1", applied: 0, outcome: "complete" },
    });
    expect((await status()).attempts).toBe(attempts);
    expect((await notify(host, { watermark: "x" })).status).toBe(400);
    await host.close();
  });

  it("lets notify in with the token or the admin key only, and has no notify without an upstream", async () => {
    const { host } = await setup();
    expect((await notify(host, undefined, {})).status).toBe(401);
    expect((await notify(host, undefined, { authorization: "Bearer wrong-token" })).status).toBe(403);
    expect((await notify(host, undefined, ADMIN)).status).toBe(200);
    await host.close();

    const plain = await testHost({ ...config(new ScriptedUpstream()), upstream: undefined });
    expect((await notify(plain)).status).toBe(404);
    expect((await send(plain, "POST", "/ns/admin/ingest", { headers: ADMIN })).status).toBe(404);
    await plain.close();
  });

  it("a notify that comes while a pass runs waits for a pass that starts after it", async () => {
    const { upstream, host } = await setup();
    upstream.commit([{ id: "a", n: 1 }]);
    await notify(host); // the snapshot; the passes below read changes
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const changes = upstream.changes.bind(upstream);
    let calls = 0;
    upstream.changes = async (after, limit) => {
      calls++;
      if (calls === 1) await held;
      return changes(after, limit);
    };
    const first = notify(host);
    await new Promise((resolve) => setTimeout(resolve, 20));
    upstream.commit([{ id: "b", n: 2 }]);
    const second = notify(host);
    const third = notify(host);
    release();
    const answers = await Promise.all([first, second, third]);
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200]);
    expect(answers[1]!.json.watermark).toBe("2");
    // The two late callers shared one pass.
    expect(answers[2]!.json).toEqual(answers[1]!.json);
    await host.close();
  });

  it("ingests before a pull once the last pass is older than the freshness", async () => {
    const { upstream, host, pull, status } = await setup({ freshnessMs: 0 });
    upstream.commit([{ id: "a", n: 1 }]);
    expect((await pull()).json.rowsPatch).toContainEqual({
      op: "put",
      tableName: "item",
      value: { id: "a", n: 1 },
    });
    upstream.commit([{ id: "b", n: 2 }]);
    expect((await pull()).json.rowsPatch).toEqual([
      { op: "put", tableName: "item", value: { id: "b", n: 2 } },
    ]);
    expect((await status()).cursor).toBe("2");
    await host.close();

    const fresh = await setup({ freshnessMs: 60_000 });
    fresh.upstream.commit([{ id: "a", n: 1 }]);
    await fresh.pull();
    fresh.upstream.commit([{ id: "b", n: 2 }]);
    // Within the freshness the pull answers from the replica.
    expect((await fresh.pull()).json.unchanged).toBe(true);
    await fresh.host.close();
  });

  it("answers pulls from the replica while the upstream refuses it as misconfigured, and says so on notify", async () => {
    const { upstream, host, pull, status } = await setup({ freshnessMs: 0, freshnessWaitMs: 50 });
    upstream.commit([{ id: "a", n: 1 }]);
    await notify(host);
    upstream.failures.push(new UpstreamCallError(401, "unauthorized", "bad token"));
    expect((await pull()).status).toBe(200);
    // Not an outage: asking again changes nothing, so the breaker opens at once.
    const refused = await notify(host);
    expect(refused).toMatchObject({ status: 502, json: { error: "upstream_misconfigured" } });
    expect(refused.json.message).toContain("401");
    expect((await status()).lastPass.error).toContain("bad token");
    expect((await status()).breaker.open).toMatchObject({ reason: "upstream_config" });
    await host.close();
  });

  it("trips the breaker on its row budget, keeps it across a reopen of the namespace, and closes it on request", async () => {
    const { upstream, host, pull, status, store } = await setup({ breaker: { rows: 3, windowMs: 60_000 } });
    upstream.commit([{ id: "a", n: 1 }]);
    await notify(host);
    upstream.commit([
      { id: "b", n: 1 },
      { id: "c", n: 1 },
      { id: "d", n: 1 },
      { id: "e", n: 1 },
    ]);
    const tripped = await notify(host);
    expect(tripped.status).toBe(503);
    expect(tripped.json.error).toBe("ingest_paused");
    expect((await status()).breaker.open).toMatchObject({ reason: "budget_exceeded", trips: 1 });
    expect((await pull()).status).toBe(200);
    await host.close();

    // The same database under a new host: the breaker is still open.
    const again = await testHost(config(upstream, { breaker: { rows: 3, windowMs: 60_000 } }), {
      storage: memoryStorage(() => store),
    });
    expect((await notify(again)).json.error).toBe("ingest_paused");
    const reopened = await send(again, "POST", "/ns/admin/breaker/reopen", { headers: ADMIN });
    expect(reopened.json).toEqual({ reopened: true, wasOpen: true });
    upstream.commit([{ id: "f", n: 1 }]);
    expect((await notify(again)).status).toBe(200);
    await again.close();
  });

  it("trips the breaker when a batch does not move the cursor", async () => {
    const { upstream, host, status } = await setup();
    upstream.commit([{ id: "a", n: 1 }]);
    await notify(host);
    upstream.changes = async () => ({
      watermark: 1n,
      changes: [
        { watermark: 1n, tableName: "item", op: "INSERT", rowData: { id: "z", n: 1 }, oldData: null },
      ],
    });
    expect((await notify(host)).json.error).toBe("ingest_paused");
    expect((await status()).breaker.open.reason).toBe("cursor_stalled");
    await host.close();
  });

  it("stops on schema drift without applying the batch, until an operator reopens it", async () => {
    const { upstream, host, pull, status } = await setup();
    upstream.commit([{ id: "a", n: 1 }]);
    await notify(host);
    await pull();
    upstream.log.push(
      { watermark: 2n, tableName: "item", op: "INSERT", rowData: { id: "b", n: 2 }, oldData: null },
      {
        watermark: 2n,
        tableName: "item",
        op: "INSERT",
        rowData: { id: "c", n: 3, color: "red" },
        oldData: null,
      },
    );
    upstream.watermark = 2;
    const drifted = await notify(host);
    expect(drifted).toMatchObject({ status: 409, json: { error: "schema_drift" } });
    expect(drifted.json.message).toContain("color");
    const stopped = await status();
    expect(stopped).toMatchObject({ cursor: "1", stopped: { code: "schema_drift" } });
    expect((await pull()).json.unchanged).toBe(true);
    const attempts = stopped.attempts;
    expect((await notify(host)).status).toBe(409);
    expect((await status()).attempts).toBe(attempts);
    expect((await send(host, "POST", "/ns/admin/breaker/reopen", { headers: ADMIN })).json.wasOpen).toBe(
      true,
    );
    expect((await status()).stopped).toBeNull();
    await host.close();
  });

  it("lifts a stop for schema drift when the namespace opens under another schema, and keeps it under the same one", async () => {
    const { upstream, host, store } = await setup();
    upstream.commit([{ id: "a", n: 1 }]);
    await notify(host);
    upstream.log.push({
      watermark: 2n,
      tableName: "item",
      op: "INSERT",
      rowData: { id: "c", n: 3, color: "red" },
      oldData: null,
    });
    upstream.watermark = 2;
    expect((await notify(host)).status).toBe(409);
    await host.close();
    const reopened = async (weirConfig: WeirConfig) => {
      const again = await testHost(weirConfig, { storage: memoryStorage(() => store) });
      const answer = await notify(again);
      const status = (await send(again, "GET", "/ns/admin/status", { headers: ADMIN })).json.upstream;
      await again.close();
      return { answer, status };
    };
    // Restarted under the same schema, it stays stopped.
    const same = await reopened(config(upstream));
    expect(same.answer.status).toBe(409);
    expect(same.status).toMatchObject({ cursor: "1", stopped: { code: "schema_drift" } });
    // Under a schema that declares the column (the fix), the next pass applies the batch.
    const declared = config(upstream);
    declared.schema = {
      tables: {
        item: {
          columns: { id: "string", n: "integer", color: { type: "string", nullable: true } },
          primaryKey: ["id"],
        },
      },
    };
    const fixed = await reopened(declared);
    expect(fixed.answer.status).toBe(200);
    expect(fixed.status).toMatchObject({ cursor: "2", stopped: null });
  });

  it("runs a pass and a new snapshot generation from the admin routes, and clients reset after it", async () => {
    const { upstream, host, pull } = await setup();
    upstream.commit([
      { id: "a", n: 1 },
      { id: "b", n: 2 },
    ]);
    const pass = await send(host, "POST", "/ns/admin/ingest", { headers: ADMIN });
    expect(pass.json).toMatchObject({ outcome: "complete", rows: 2, cursorBefore: null, cursorAfter: "1" });
    await pull();
    upstream.commit([{ id: "a" }]);
    const resnapshot = await send(host, "POST", "/ns/admin/resnapshot", { headers: ADMIN });
    expect(resnapshot.json).toMatchObject({ outcome: "complete", cursorAfter: "2" });
    expect((await pull()).json.rowsPatch).toEqual([
      { op: "clear" },
      { op: "put", tableName: "item", value: { id: "b", n: 2 } },
    ]);
    expect((await send(host, "POST", "/ns/admin/ingest", { headers: ADMIN, body: { x: 1 } })).status).toBe(
      400,
    );
    await host.close();
  });

  it("counts every upstream call, retried ones too, and shows the cursor, lag and last pass", async () => {
    const { upstream, host, status } = await setup();
    upstream.commit([{ id: "a", n: 1 }]);
    upstream.failures.push(new UpstreamCallError(503, "busy", "busy", 10));
    await notify(host);
    const shown = await status();
    expect(shown).toMatchObject({
      cursor: "1",
      // The first page (refused), the page again, the catch-up, and the look that found nothing new.
      attempts: 4,
      lastPass: { outcome: "complete", rows: 1 },
      breaker: { open: null },
      stopped: null,
    });
    expect(shown.lagMs).toBeGreaterThanOrEqual(0);
    await host.close();
  });

  it("ingests an open namespace when an upstream in the process says it committed", async () => {
    const { upstream, host, woken, status } = await setup();
    upstream.commit([{ id: "a", n: 1 }]);
    await notify(host);
    upstream.commit([{ id: "b", n: 2 }]);
    host.upstreamCommitted(["ns", "not-open"]);
    await waitFor(async () => (await status()).cursor === "2");
    await waitFor(async () => woken.length >= 2);
    expect(host.openNamespaces).toBe(1);
    await host.close();
  });

  it("ingests before the first pull after a restart when the upstream said it committed while the namespace was not open", async () => {
    const upstream = new ScriptedUpstream();
    const store = { ...memoryStore(), close: () => {} };
    const start = () => testHost(config(upstream), { storage: memoryStorage(() => store) });
    const pull = (host: WeirHost, group: string) =>
      send(host, "POST", "/ns/pull", {
        user: "alice",
        body: { clientGroupID: group, clientID: "c", cookie: null },
      });
    const first = await start();
    upstream.commit([{ id: "a", n: 1 }]);
    await notify(first);
    await first.close();

    // Restarted well within the freshness of the last pass (60 s here), which it keeps.
    const second = await start();
    upstream.commit([{ id: "b", n: 2 }]);
    second.upstreamCommitted(["ns"]);
    expect(second.openNamespaces).toBe(0);
    expect((await pull(second, "g1")).json.rowsPatch).toEqual([
      { op: "clear" },
      { op: "put", tableName: "item", value: { id: "a", n: 1 } },
      { op: "put", tableName: "item", value: { id: "b", n: 2 } },
    ]);
    await second.close();

    // Without word from the upstream, the stored freshness holds: the replica answers.
    const third = await start();
    upstream.commit([{ id: "c", n: 3 }]);
    expect((await pull(third, "g2")).json.rowsPatch).toHaveLength(3);
    await third.close();
  });

  it("polls the upstream while wake sockets are open, and stops when they close", async () => {
    let sockets = 1;
    const { upstream, host, status } = await setup({ pollMs: 20 }, () => sockets);
    upstream.commit([{ id: "a", n: 1 }]);
    const socket = await host.handleParts(
      partsFromRequest(
        new Request("http://weir.test/ns/wake?clientID=c1", {
          headers: { authorization: "alice", upgrade: "websocket" },
        }),
      ),
    );
    expect(socket.status).toBe(101);
    await waitFor(async () => (await status()).cursor === "1");
    upstream.commit([{ id: "b", n: 2 }]);
    await waitFor(async () => (await status()).cursor === "2");
    sockets = 0;
    await new Promise((resolve) => setTimeout(resolve, 60));
    upstream.commit([{ id: "c", n: 3 }]);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await status()).toMatchObject({ cursor: "2", polling: false });
    await host.close();
  });

  it("ingest and mutators interleave without losing a write", async () => {
    const { upstream, host, pull } = await setup({ freshnessMs: 0 });
    // The first pass takes a snapshot (which replaces the tables); the rounds follow changes.
    upstream.commit([{ id: "seed", n: 0 }]);
    await notify(host);
    for (let round = 0; round < 20; round++) {
      upstream.commit([{ id: `u${round}`, n: round }]);
      const pushed = send(host, "POST", "/ns/push", {
        user: "alice",
        body: {
          clientGroupID: "g-alice",
          mutations: [
            {
              type: "custom",
              clientID: "c-alice",
              id: round + 1,
              name: "setItem",
              args: [{ id: `m${round}`, n: round }],
            },
          ],
          pushVersion: 1,
        },
      });
      const notified = notify(host);
      const [push, note] = await Promise.all([pushed, notified]);
      expect(push.status).toBe(200);
      expect(note.status).toBe(200);
    }
    const ids = (await pull()).json.rowsPatch
      .filter((op: { op: string }) => op.op === "put")
      .map((op: { value: { id: string } }) => op.value.id)
      .sort();
    expect(ids).toHaveLength(41);
    await host.close();
  });
});

async function waitFor(check: () => Promise<boolean>, timeoutMs = 3_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe("recovery after schema drift", () => {
  it("pulls say ingest stopped; a reopen with resnapshot skips the buffered change, a plain one meets it again", async () => {
    const { upstream, host, pull, status } = await setup();
    upstream.commit([{ id: "a", n: 1 }]);
    expect((await notify(host)).status).toBe(200);
    // A change the schema cannot follow (a column it lacks), then fixed upstream: the row as
    // the table now holds it has only the schema's columns.
    upstream.watermark++;
    upstream.log.push({
      watermark: BigInt(upstream.watermark),
      tableName: "item",
      op: "INSERT",
      rowData: { id: "b", n: 2, extra: true },
      oldData: null,
    });
    upstream.rows.set("b", { id: "b", n: 2 });
    expect((await notify(host)).json.error).toBe("schema_drift");
    expect((await status()).stopped).toMatchObject({ code: "schema_drift" });
    const stale = await pull();
    expect(stale.headers.get("weir-ingest-stopped")).toBe("schema_drift");

    const plain = await send(host, "POST", "/ns/admin/breaker/reopen", { headers: ADMIN });
    expect(plain.json).toEqual({ reopened: true, wasOpen: true });
    expect((await notify(host)).json.error).toBe("schema_drift");

    const fresh = await send(host, "POST", "/ns/admin/breaker/reopen", {
      headers: ADMIN,
      body: { resnapshot: true },
    });
    expect(fresh.json).toMatchObject({ reopened: true, wasOpen: true, resnapshot: { outcome: "complete" } });
    expect((await status()).stopped).toBeNull();
    const after = await pull();
    expect(after.headers.get("weir-ingest-stopped")).toBeNull();
    expect(after.json.rowsPatch).toEqual([
      { op: "clear" },
      { op: "put", tableName: "item", value: { id: "a", n: 1 } },
      { op: "put", tableName: "item", value: { id: "b", n: 2 } },
    ]);
    const refused = await send(host, "POST", "/ns/admin/breaker/reopen", {
      headers: ADMIN,
      body: { resnapshot: 1 },
    });
    expect(refused.status).toBe(400);
  });
});
