import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createServer } from "@weir/node-host";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { queries, rowsOf, sockets, zeroClient } from "../test/zero-client.js";
import {
  create,
  eventually,
  newID,
  TEST_MAX_BODY_BYTES,
  type Todo,
  zeroClientSuite,
} from "../test/zero-client-suite.js";
import { zeroTodoConfig } from "./zero-config.js";

// The stock Zero client (1.9.0, sync protocol v51, memory store) against a running weir Node
// host: real WebSockets on a random loopback port, real SQLite.

type Server = ReturnType<typeof createServer>;

let server: Server;
let base: string;

beforeAll(async () => {
  server = createServer({
    ...zeroTodoConfig,
    maxBodyBytes: TEST_MAX_BODY_BYTES,
    storage: "memory",
    logger: { log: () => {} },
  });
  const { url } = await server.listen({ port: 0, host: "127.0.0.1" });
  base = `${url.replace(/\/$/, "")}/todo`;
});

afterAll(async () => {
  await server.close();
});

describe("the stock Zero client", () => zeroClientSuite(() => base));

describe("the stock Zero client across a server restart", () => {
  it("reconnects to the restarted server with its cookie; its rows and queries carry on", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "weir-zero-"));
    const options = { ...zeroTodoConfig, dataDir, logger: { log: () => {} } };
    let first: Server | undefined = createServer(options);
    const { url, port } = await first.listen({ port: 0, host: "127.0.0.1" });
    let second: Server | undefined;
    const z = zeroClient(`${url}/todo`, "gina", { storageKey: "restart" });
    try {
      const before = newID();
      expect(await create(z, { id: before, text: "Before", done: false, sort: 1 })).toEqual({
        type: "success",
      });
      await rowsOf<Todo>(z, queries.allTodos(), (rows) => rows.some((row) => row.id === before));
      await first.close();
      first = undefined;
      second = createServer(options);
      await second.listen({ port, host: "127.0.0.1" });
      const after = newID();
      expect(await create(z, { id: after, text: "After", done: true, sort: 2 })).toEqual({ type: "success" });
      const rows = await rowsOf<Todo>(z, queries.allTodos(), (rows) => rows.some((row) => row.id === after));
      expect(rows.map((row) => row.id)).toEqual([before, after]);
      const reconnected = sockets.findLast((s) => s.connectURL.searchParams.get("clientID") === z.clientID)!;
      expect(reconnected.connectURL.searchParams.get("baseCookie")).not.toBe("");
      // The restarted server goes on from the client's cookie: no poke clears its rows.
      expect(reconnected.received.some((message) => message[0] === "pokePart")).toBe(true);
      expect(JSON.stringify(reconnected.received)).not.toContain('"op":"clear"');
    } finally {
      await z.close();
      await first?.close();
      await second?.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

/** A server whose query-aware answers have no time (`queryAnswerMs` 0): each is a page or a step. */
async function untimedServer() {
  const server = createServer({
    ...zeroTodoConfig,
    storage: "memory",
    queryAnswerMs: 0,
    logger: { log: () => {} },
  });
  const { url } = await server.listen({ port: 0, host: "127.0.0.1" });
  return { server, url };
}

/**
 * Kim's `mutations` pushed over HTTP in one push (the stock client pushes one by one), their ids
 * from `firstID` on.
 */
async function pushAsKim(url: string, firstID: number, mutations: Array<{ name: string; args: unknown }>) {
  const pushed = await fetch(`${url}/todo/push`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "kim" },
    body: JSON.stringify({
      clientGroupID: "kim-seed",
      pushVersion: 1,
      mutations: mutations.map(({ name, args }, i) => ({
        type: "custom",
        id: firstID + i,
        clientID: "kim-seed-c",
        name,
        args: [args],
        timestamp: 1,
      })),
    }),
  });
  expect(pushed.status).toBe(200);
}

describe("the stock Zero client hydrating an answer cut by its time", () => {
  it("holds every row in its view once the pokes of a hydration sent a page each (queryAnswerMs 0)", async () => {
    const { server: timed, url } = await untimedServer();
    // 1,500 todos of one user.
    const TODOS = 1_500;
    await pushAsKim(
      url,
      1,
      Array.from({ length: TODOS }, (_, i) => ({
        name: "createTodo",
        args: { id: `t${String(i).padStart(5, "0")}`, text: `Todo ${i}`, done: false, sort: TODOS - i },
      })),
    );
    const z = zeroClient(`${url}/todo`, "kim", { storageKey: "answer-time" });
    try {
      const rows = await rowsOf<Todo>(z, queries.allTodos(), (rows) => rows.length === TODOS, 30_000);
      // The view is whole and in the query's order.
      expect(rows.map((row) => row.sort)).toEqual(Array.from({ length: TODOS }, (_, i) => i + 1));
      // The hydration came in several pokes, a page of rows each.
      const mine = sockets.filter((s) => s.connectURL.searchParams.get("clientID") === z.clientID);
      const parts = mine
        .flatMap((s) => s.received)
        .filter(
          (m) => m[0] === "pokePart" && ((m[1] as { rowsPatch?: unknown[] }).rowsPatch?.length ?? 0) > 0,
        );
      expect(parts.length).toBeGreaterThan(1);
      expect(parts.every((m) => (m[1] as { rowsPatch: unknown[] }).rowsPatch.length <= 256)).toBe(true);
    } finally {
      await z.close();
      await timed.close();
    }
  }, 60_000);
});

describe("the stock Zero client holding a window of thousands of todos", () => {
  it("sees the window whole once its pages came, and as it is after writes at its front", async () => {
    const { server: timed, url } = await untimedServer();
    // 3,000 todos; the window holds the first 2,500 by sort, more than a page of the engine (2,048).
    const TODOS = 3_000;
    await pushAsKim(
      url,
      1,
      Array.from({ length: TODOS }, (_, i) => ({
        name: "createTodo",
        args: { id: `t${String(i).padStart(5, "0")}`, text: `Todo ${i}`, done: false, sort: i + 1 },
      })),
    );
    const z = zeroClient(`${url}/todo`, "kim", { storageKey: "window" });
    try {
      const window = queries.firstTodos({ limit: 2_500 });
      const first = await rowsOf<Todo>(z, window, (rows) => rows.length === 2_500, 30_000);
      expect(first.map((row) => row.sort)).toEqual(Array.from({ length: 2_500 }, (_, i) => i + 1));
      // A todo comes before the first, and the fifth and sixth go: the window takes the one, lets
      // go of the others, and reads on past its last todo for one more.
      await pushAsKim(url, TODOS + 1, [
        { name: "createTodo", args: { id: "t-front", text: "Front", done: false, sort: 0 } },
        { name: "deleteTodo", args: { id: "t00004" } },
        { name: "deleteTodo", args: { id: "t00005" } },
      ]);
      const after = await rowsOf<Todo>(
        z,
        window,
        (rows) => rows[0]?.sort === 0 && rows.length === 2_500 && !rows.some((row) => row.sort === 6),
        30_000,
      );
      expect(after.map((row) => row.sort)).toEqual([
        0,
        1,
        2,
        3,
        4,
        ...Array.from({ length: 2_495 }, (_, i) => i + 7),
      ]);
    } finally {
      await z.close();
      await timed.close();
    }
  }, 60_000);
});

describe("the stock Zero client of a user at the server's socket cap", () => {
  it("is refused with ServerOverloaded while the user holds the cap, then connects and syncs once a socket closes", async () => {
    const capped = createServer({
      ...zeroTodoConfig,
      storage: "memory",
      maxSocketsPerUser: 1,
      logger: { log: () => {} },
    });
    const { url } = await capped.listen({ port: 0, host: "127.0.0.1" });
    const first = zeroClient(`${url}/todo`, "ivy", { storageKey: "cap-first" });
    let second: ReturnType<typeof zeroClient> | undefined;
    const other = zeroClient(`${url}/todo`, "jon", { storageKey: "cap-other" });
    try {
      const id = newID();
      expect(await create(first, { id, text: "Held", done: false, sort: 1 })).toEqual({ type: "success" });
      // A second client of the same user: its socket gets the refusal where the client reads it.
      second = zeroClient(`${url}/todo`, "ivy", { storageKey: "cap-second" });
      const secondID = second.clientID;
      const ofSecond = () => sockets.filter((s) => s.connectURL.searchParams.get("clientID") === secondID);
      const view = second.materialize(queries.allTodos());
      await eventually(async () =>
        expect(
          ofSecond()
            .flatMap((s) => s.received)
            .find((m) => m[0] === "error")?.[1],
        ).toMatchObject({
          kind: "ServerOverloaded",
          message: "this user has 1 socket open, the most one user may; close one to open another",
        }),
      );
      view.destroy();
      // Another user connects and syncs meanwhile.
      await rowsOf<Todo>(other, queries.allTodos(), () => true);
      // The first client closes: the second connects on its next try and syncs the user's rows.
      await first.close();
      const rows = await rowsOf<Todo>(
        second,
        queries.allTodos(),
        (rows) => rows.some((row) => row.id === id),
        30_000,
      );
      expect(rows.map((row) => row.id)).toEqual([id]);
    } finally {
      await first.close();
      await second?.close();
      await other.close();
      await capped.close();
    }
  }, 60_000);
});

describe("the stock Zero client that missed pokes, across a server restart", () => {
  it("catches up with only the rows it missed: another device wrote as its socket dropped", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "weir-zero-"));
    const options = { ...zeroTodoConfig, dataDir, logger: { log: () => {} } };
    let first: Server | undefined = createServer(options);
    const { url, port } = await first.listen({ port: 0, host: "127.0.0.1" });
    let second: Server | undefined;
    const z = zeroClient(`${url}/todo`, "hugo", { storageKey: "missed-reader" });
    const device = zeroClient(`${url}/todo`, "hugo", { storageKey: "missed-writer" });
    const view = z.materialize(queries.allTodos());
    try {
      const held: string[] = [];
      for (let sort = 1; sort <= 10; sort++) {
        const id = newID();
        held.push(id);
        expect(await create(device, { id, text: `Held ${sort}`, done: false, sort })).toEqual({
          type: "success",
        });
      }
      await rowsOf<Todo>(z, queries.allTodos(), (rows) => rows.length === held.length);
      // The reader's socket stops passing frames on, as one that dropped while pokes went out:
      // the server sends them, the client never applies them.
      const socket = sockets.findLast((s) => s.connectURL.searchParams.get("clientID") === z.clientID)!;
      socket.muted = true;
      const missed = [newID(), newID()];
      for (const [i, id] of missed.entries()) {
        const seen = socket.received.filter((m) => m[0] === "pokeEnd").length;
        expect(await create(device, { id, text: `Missed ${i}`, done: false, sort: 20 + i })).toEqual({
          type: "success",
        });
        await eventually(async () =>
          expect(socket.received.filter((m) => m[0] === "pokeEnd").length).toBeGreaterThan(seen),
        );
      }
      await device.close();
      await first.close();
      first = undefined;
      second = createServer(options);
      await second.listen({ port, host: "127.0.0.1" });
      const rows = await rowsOf<Todo>(z, queries.allTodos(), (rows) => rows.length === held.length + 2);
      expect(rows.map((row) => row.id)).toEqual([...held, ...missed]);
      const reconnected = sockets.findLast((s) => s.connectURL.searchParams.get("clientID") === z.clientID)!;
      expect(reconnected).not.toBe(socket);
      // The restarted server sent the two rows the client missed, not every row again.
      const text = JSON.stringify(reconnected.received);
      expect(text).not.toContain('"op":"clear"');
      const puts = reconnected.received
        .filter((m) => m[0] === "pokePart")
        .flatMap(
          (m) => (m[1] as { rowsPatch?: Array<{ op: string; value?: { id: string } }> }).rowsPatch ?? [],
        )
        .filter((op) => op.op === "put")
        .map((op) => op.value!.id);
      expect(puts.sort()).toEqual([...missed].sort());
    } finally {
      view.destroy();
      await z.close();
      await device.close();
      await first?.close();
      await second?.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
