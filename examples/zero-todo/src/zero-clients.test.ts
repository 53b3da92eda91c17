import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createServer } from "@weir/node-host";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  localTodos,
  mutators,
  queries,
  rowsOf,
  sockets,
  type TodoZero,
  zeroClient,
} from "../test/zero-client.js";
import { zeroTodoConfig } from "./zero-config.js";

// The stock Zero client (1.9.0, sync protocol v51, memory store) against a running weir Node
// host: real WebSockets on a random loopback port, real SQLite.

interface Todo {
  id: string;
  owner: string;
  text: string;
  done: boolean;
  sort: number;
}

type Server = ReturnType<typeof createServer>;

let server: Server;
let base: string;
const clients: TodoZero[] = [];

beforeAll(async () => {
  server = createServer({ ...zeroTodoConfig, storage: "memory", logger: { log: () => {} } });
  const { url } = await server.listen({ port: 0, host: "127.0.0.1" });
  base = `${url.replace(/\/$/, "")}/todo`;
});

afterAll(async () => {
  await server.close();
});

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
});

/**
 * A new client, closed after the test. Clients of one user and storage key share a client group
 * (Zero keys its store by both, as tabs of one browser share one), so each gets its own key.
 */
function client(user: string): TodoZero {
  const z = zeroClient(base, user, { storageKey: `k${++keys}` });
  clients.push(z);
  return z;
}

let ids = 0;
let keys = 0;
const newID = () => `t${++ids}-${Date.now()}`;

describe("the stock Zero client", () => {
  it("subscribes to a named query, and a confirmed custom mutation's row arrives complete", async () => {
    const z = client("alice");
    const id = newID();
    expect(await create(z, { id, text: "Walk", done: false, sort: 1 })).toEqual({ type: "success" });
    const rows = await rowsOf<Todo>(z, queries.allTodos(), (rows) => rows.some((row) => row.id === id));
    expect(rows.find((row) => row.id === id)).toMatchObject({ owner: "alice", text: "Walk", done: false });
  });

  it("rolls back a custom mutation the server refuses; .server answers the app error", async () => {
    const id = newID();
    const alice = client("alice");
    expect(await create(alice, { id, text: "Mine", done: false, sort: 1 })).toEqual({ type: "success" });
    // Bob cannot see Alice's todo, so his client inserts it; the server refuses the duplicate id.
    const bob = client("bob");
    await rowsOf<Todo>(bob, queries.allTodos(), () => true);
    const result = bob.mutate(mutators.createTodo({ id, text: "Taken", done: false, sort: 2 }));
    await result.client;
    expect((await localTodos<Todo>(bob)).map((row) => row.id)).toContain(id);
    expect(await result.server).toMatchObject({
      type: "error",
      error: { type: "app", message: `todo ${id} already exists` },
    });
    await eventually(async () =>
      expect((await localTodos<Todo>(bob)).map((row) => row.id)).not.toContain(id),
    );
  });

  it("pokes a write by another client of the same user, and none of another user's", async () => {
    const reader = client("carol");
    await rowsOf<Todo>(reader, queries.allTodos(), () => true);
    const writer = client("carol");
    const stranger = client("dave");
    const id = newID();
    expect(await create(stranger, { id: `${id}-dave`, text: "Not yours", done: false, sort: 1 })).toEqual({
      type: "success",
    });
    expect(await create(writer, { id, text: "From elsewhere", done: false, sort: 2 })).toEqual({
      type: "success",
    });
    const rows = await rowsOf<Todo>(reader, queries.allTodos(), (rows) => rows.some((row) => row.id === id));
    expect(rows.map((row) => row.id)).toEqual([id]);
  });

  it("drops the rows of a query the client no longer wants, keeping those another query holds", async () => {
    const z = client("erin");
    const open = newID();
    const done = newID();
    await create(z, { id: open, text: "Open", done: false, sort: 1 });
    await create(z, { id: done, text: "Done", done: true, sort: 2 });
    const doneView = z.materialize(queries.todosByDone({ done: true }), { ttl: "none" });
    const openView = z.materialize(queries.todosByDone({ done: false }), { ttl: "none" });
    await rowsOf<Todo>(z, queries.todosByDone({ done: false }), (rows) =>
      rows.some((row) => row.id === open),
    );
    openView.destroy();
    await eventually(async () => expect((await localTodos<Todo>(z)).map((row) => row.id)).toEqual([done]));
    doneView.destroy();
  });

  it("keeps the clients of one client group (tabs) on the same rows", async () => {
    const tab1 = zeroClient(base, "hank", { storageKey: "tabs" });
    const tab2 = zeroClient(base, "hank", { storageKey: "tabs" });
    clients.push(tab1, tab2);
    expect(await tab1.clientGroupID).toBe(await tab2.clientGroupID);
    const one = newID();
    const two = newID();
    await rowsOf<Todo>(tab2, queries.allTodos(), () => true);
    expect(await create(tab1, { id: one, text: "One", done: false, sort: 1 })).toEqual({ type: "success" });
    expect(await create(tab2, { id: two, text: "Two", done: false, sort: 2 })).toEqual({ type: "success" });
    for (const tab of [tab1, tab2]) {
      const rows = await rowsOf<Todo>(tab, queries.allTodos(), (rows) => rows.length === 2);
      expect(rows.map((row) => row.id)).toEqual([one, two]);
    }
  });

  it("reconnects with its cookie and catches up without starting over", async () => {
    const z = client("frank");
    const first = newID();
    await create(z, { id: first, text: "Before", done: false, sort: 1 });
    await rowsOf<Todo>(z, queries.allTodos(), (rows) => rows.some((row) => row.id === first));
    const socket = sockets.findLast((s) => s.connectURL.searchParams.get("clientID") === z.clientID)!;
    const cookie = lastCookie(socket.received);
    socket.close();
    const other = client("frank");
    const second = newID();
    await create(other, { id: second, text: "While away", done: false, sort: 2 });
    await rowsOf<Todo>(z, queries.allTodos(), (rows) => rows.some((row) => row.id === second));
    const again = sockets.findLast((s) => s.connectURL.searchParams.get("clientID") === z.clientID)!;
    expect(again).not.toBe(socket);
    expect(again.connectURL.searchParams.get("baseCookie")).toBe(cookie);
    // The catch-up is incremental: no poke on the new socket clears the client's rows.
    expect(JSON.stringify(again.received)).not.toContain('"op":"clear"');
  });
});

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
    } finally {
      await z.close();
      await first?.close();
      await second?.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

async function create(z: TodoZero, args: { id: string; text: string; done: boolean; sort: number }) {
  return z.mutate(mutators.createTodo(args)).server;
}

function lastCookie(frames: unknown[][]): string {
  const ends = frames.filter((frame) => frame[0] === "pokeEnd");
  return (ends.at(-1)![1] as { cookie: string }).cookie;
}

async function eventually(check: () => Promise<void>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      await check();
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}
