import { afterEach, expect, it } from "vitest";
import {
  localTodos,
  mutators,
  queries,
  rowsOf,
  sockets,
  socketTrace,
  type TodoZero,
  zeroClient,
} from "./zero-client.js";

// The stock Zero client's cases, which every host runs: the Node host over `ws`, the edge host's
// Durable Object in workerd.

import type { Todo } from "@weir/example-todo/schema";

export type { Todo };

let ids = 0;
export const newID = () => `t${++ids}-${Date.now()}`;

/** The `maxBodyBytes` every host the suite runs against is configured with. */
export const TEST_MAX_BODY_BYTES = 1024 * 1024;

export function zeroClientSuite(base: () => string): void {
  const clients: TodoZero[] = [];
  let keys = 0;

  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.close()));
  });

  /**
   * A new client, closed after the test. Clients of one user and storage key share a client
   * group (Zero keys its store by both, as tabs of one browser share one), so each gets its own key.
   */
  function client(user: string): TodoZero {
    const z = zeroClient(base(), user, { storageKey: `k${++keys}-${Date.now()}` });
    clients.push(z);
    return z;
  }

  it("subscribes to a named query, and a confirmed custom mutation's row arrives complete", async () => {
    const z = client("alice");
    const id = newID();
    expect(await create(z, { id, text: "Walk", done: false, sort: 1 })).toEqual({ type: "success" });
    const rows = await rowsOf<Todo>(z, queries.allTodos(), (rows) => rows.some((row) => row.id === id));
    expect(rows.find((row) => row.id === id)).toMatchObject({ owner: "alice", text: "Walk", done: false });
  });

  it("confirms each of 200 mutations made in one loop, without awaiting any", async () => {
    const z = client("erin");
    const prefix = newID();
    const made = Array.from({ length: 200 }, (_, i) =>
      z.mutate(mutators.createTodo({ id: `${prefix}-${i}`, text: `bulk ${i}`, done: false, sort: i })),
    );
    const outcomes = await Promise.all(made.map((result) => result.server));
    expect(outcomes.filter((outcome) => outcome.type !== "success")).toEqual([]);
    const rows = await rowsOf<Todo>(z, queries.allTodos(), (rows) => rows.length >= 200);
    expect(rows.filter((row) => row.id.startsWith(prefix))).toHaveLength(200);
  }, 60_000);

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
    const tab1 = zeroClient(base(), "hank", { storageKey: `tabs-${keys}` });
    const tab2 = zeroClient(base(), "hank", { storageKey: `tabs-${keys}` });
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

  it("stops on a mutation past the server's frame limit (1009) instead of reconnecting to send it again", async () => {
    let stop = () => {};
    const stopped = new Promise<void>((resolve) => {
      stop = resolve;
    });
    const z = zeroClient(base(), "ivan", {
      storageKey: `big-${++keys}`,
      onClientStateNotFound: () => stop(),
    });
    clients.push(z);
    await rowsOf<Todo>(z, queries.allTodos(), () => true);
    // Past the test servers' maxBodyBytes, and within the frame sizes hosts took regardless of it.
    const text = "x".repeat(TEST_MAX_BODY_BYTES * 1.5);
    const result = z.mutate(mutators.createTodo({ id: newID(), text, done: false, sort: 1 }));
    result.server.catch(() => {});
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      stopped,
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error("the client did not stop")), 20_000);
      }),
    ]).finally(() => clearTimeout(timer));
    // One socket, closed with 1009, and none opened again to send the mutation once more.
    const mine = sockets.filter((s) => s.connectURL.searchParams.get("clientID") === z.clientID);
    expect(mine.map((s) => s.closeCode)).toEqual([1009]);
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
    await rowsOf<Todo>(z, queries.allTodos(), (rows) => rows.some((row) => row.id === second)).catch(
      (error: Error) => {
        throw new Error(`${error.message}; the client's sockets:\n${socketTrace(z.clientID)}`);
      },
    );
    const again = sockets.findLast((s) => s.connectURL.searchParams.get("clientID") === z.clientID)!;
    expect(again).not.toBe(socket);
    expect(again.connectURL.searchParams.get("baseCookie")).toBe(cookie);
    // The catch-up is incremental: no poke on the new socket clears the client's rows.
    expect(JSON.stringify(again.received)).not.toContain('"op":"clear"');
  });
}

export async function create(z: TodoZero, args: { id: string; text: string; done: boolean; sort: number }) {
  return z.mutate(mutators.createTodo(args)).server;
}

export function lastCookie(frames: unknown[][]): string {
  const ends = frames.filter((frame) => frame[0] === "pokeEnd");
  return (ends.at(-1)![1] as { cookie: string }).cookie;
}

export async function eventually(check: () => Promise<void>, ms = 10_000): Promise<void> {
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
