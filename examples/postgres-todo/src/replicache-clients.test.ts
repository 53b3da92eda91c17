import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { sync, type TodoClient, todoClient, todosOf } from "../test/todo-client.js";
import { startTodoStack, type TodoStack } from "../test/todo-stack.js";
import { appClientIDs, todoTableRows } from "../test/todo-table-rows.js";
import { APP_CONNECTION_NAME } from "./start-postgres-todo.js";

// The stock Replicache client through the whole loop: weir forwards each push to the app
// server, which writes PostgreSQL; logical replication brings the rows back into weir, which
// then acknowledges the push. A real PostgreSQL cluster, real HTTP, real SQLite.

let stack: TodoStack;
const clients: TodoClient[] = [];

beforeAll(async () => {
  stack = await startTodoStack();
});

afterAll(async () => {
  await stack?.close();
});

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
});

function client(user: string, onPush?: (body: string) => void): TodoClient {
  const rep = todoClient(stack.base, user, onPush);
  clients.push(rep);
  return rep;
}

async function pushToWeir(user: string, body: unknown): Promise<Response> {
  return fetch(`${stack.base}/replicache/push`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: user },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

describe("stock Replicache clients through weir, the app server and PostgreSQL", () => {
  it("converge: every mutation is acknowledged, each user sees their own rows, and the clients hold what the table holds", async () => {
    const alice1 = client("alice");
    const alice2 = client("alice");
    const bob = client("bob");

    await alice1.mutate.createTodo({ id: "a1", text: "buy milk", done: false, sort: 1 });
    await alice1.mutate.createTodo({ id: "a2", text: "  walk the dog  ", done: false, sort: 2 });
    await alice2.mutate.createTodo({ id: "a3", text: "write tests", done: false, sort: 3 });
    await bob.mutate.createTodo({ id: "b1", text: "bob's chore", done: false, sort: 1 });
    await Promise.all([sync(alice1), sync(alice2), sync(bob)]);
    // Every mutation is in now: one more pull each brings the others' rows.
    await Promise.all([sync(alice1), sync(alice2)]);

    // Written by the app server: the owner is the caller, the text trimmed by its checks.
    expect(await todoTableRows(stack.db)).toEqual([
      { id: "a1", owner: "alice", text: "buy milk", done: false, sort: 1 },
      { id: "b1", owner: "bob", text: "bob's chore", done: false, sort: 1 },
      { id: "a2", owner: "alice", text: "walk the dog", done: false, sort: 2 },
      { id: "a3", owner: "alice", text: "write tests", done: false, sort: 3 },
    ]);
    expect((await todosOf(alice1)).map((todo) => todo.id)).toEqual(["a1", "a2", "a3"]);

    // Alice's clients edit each other's rows; Bob edits his own.
    await alice2.mutate.updateTodo({ id: "a1", done: true });
    await alice1.mutate.updateTodo({ id: "a3", text: "write more tests" });
    await alice2.mutate.deleteTodo({ id: "a2" });
    await bob.mutate.updateTodo({ id: "b1", done: true });
    await Promise.all([sync(alice1), sync(alice2), sync(bob)]);
    await Promise.all([sync(alice1), sync(alice2)]);

    const aliceRows = await todoTableRows(stack.db, "alice");
    expect(aliceRows).toEqual([
      { id: "a1", owner: "alice", text: "buy milk", done: true, sort: 1 },
      { id: "a3", owner: "alice", text: "write more tests", done: false, sort: 3 },
    ]);
    expect(await todosOf(alice1)).toEqual(aliceRows);
    expect(await todosOf(alice2)).toEqual(aliceRows);
    expect(await todosOf(bob)).toEqual(await todoTableRows(stack.db, "bob"));
    expect(await todosOf(bob)).toEqual([
      { id: "b1", owner: "bob", text: "bob's chore", done: true, sort: 1 },
    ]);
    // Together the clients hold the whole table.
    expect([...aliceRows, ...(await todosOf(bob))].length).toBe((await todoTableRows(stack.db)).length);

    // Every mutation acknowledged: nothing pending, and the app recorded each client's last id.
    for (const rep of [alice1, alice2, bob]) expect(await rep.experimentalPendingMutations()).toEqual([]);
    const ids = await appClientIDs(stack.db);
    expect(ids.get(alice1.clientID)).toBe(3);
    expect(ids.get(alice2.clientID)).toBe(3);
    expect(ids.get(bob.clientID)).toBe(2);

    // A brand-new client gets the same rows in its first pull (from weir's replica).
    const fresh = client("alice");
    await sync(fresh);
    expect(await todosOf(fresh)).toEqual(aliceRows);
  });

  it("refuses bad arguments and another user's rows on the app server; the client's queue moves on", async () => {
    const carol = client("carol");
    await carol.mutate.createTodo({ id: "c1", text: "carol's", done: false, sort: 1 });
    await sync(carol);
    const mallory = client("mallory");
    await sync(mallory);

    // Pushes no honest client would send (its own mutators refuse them locally).
    const forged = await pushToWeir("mallory", {
      pushVersion: 1,
      clientGroupID: await mallory.clientGroupID,
      profileID: "forged",
      schemaVersion: "",
      mutations: [
        {
          clientID: "mallory-forger",
          id: 1,
          name: "updateTodo",
          args: { id: "c1", text: "hacked" },
          timestamp: 1,
        },
        { clientID: "mallory-forger", id: 2, name: "deleteTodo", args: { id: "c1" }, timestamp: 2 },
        {
          clientID: "mallory-forger",
          id: 3,
          name: "createTodo",
          args: { id: "m1", text: " ", done: false, sort: 1 },
          timestamp: 3,
        },
        {
          clientID: "mallory-forger",
          id: 4,
          name: "createTodo",
          args: { id: "c1", text: "mine now", done: false, sort: 1 },
          timestamp: 4,
        },
        {
          clientID: "mallory-forger",
          id: 5,
          name: "createTodo",
          args: { id: "m2", text: "x", done: "no", sort: 1 },
          timestamp: 5,
        },
        { clientID: "mallory-forger", id: 6, name: "dropTable", args: {}, timestamp: 6 },
      ],
    });
    expect(forged.status).toBe(200);
    expect(await todoTableRows(stack.db, "carol")).toEqual([
      { id: "c1", owner: "carol", text: "carol's", done: false, sort: 1 },
    ]);
    expect(await todoTableRows(stack.db, "mallory")).toEqual([]);
    // Every refused mutation still advanced the client's id, so its queue does not stall.
    expect((await appClientIDs(stack.db)).get("mallory-forger")).toBe(6);

    await sync(carol);
    expect(await todosOf(carol)).toEqual([
      { id: "c1", owner: "carol", text: "carol's", done: false, sort: 1 },
    ]);
    await sync(mallory);
    expect(await todosOf(mallory)).toEqual([]);
  });

  it("applies a push weir receives twice once", async () => {
    const pushes: string[] = [];
    const dave = client("dave", (body) => pushes.push(body));
    await dave.mutate.createTodo({ id: "d1", text: "once", done: false, sort: 1 });
    await sync(dave);
    const createPush = pushes.find((body) => body.includes('"createTodo"'));
    expect(createPush).toBeDefined();
    await dave.mutate.deleteTodo({ id: "d1" });
    await sync(dave);
    expect(await todoTableRows(stack.db, "dave")).toEqual([]);
    const before = await appClientIDs(stack.db);

    // The network delivers the first push again. Run again, it would bring d1 back.
    expect((await pushToWeir("dave", createPush)).status).toBe(200);
    expect(await todoTableRows(stack.db, "dave")).toEqual([]);
    expect((await appClientIDs(stack.db)).get(dave.clientID)).toBe(before.get(dave.clientID));
    await sync(dave);
    expect(await todosOf(dave)).toEqual([]);
  });

  it("refuses another user's client group, before the app server hears of it", async () => {
    const erin = client("erin");
    await erin.mutate.createTodo({ id: "e1", text: "erin's", done: false, sort: 1 });
    await sync(erin);
    const res = await pushToWeir("frank", {
      pushVersion: 1,
      clientGroupID: await erin.clientGroupID,
      profileID: "x",
      schemaVersion: "",
      mutations: [{ clientID: "frank-c", id: 1, name: "deleteTodo", args: { id: "e1" }, timestamp: 1 }],
    });
    expect(res.status).toBe(403);
    expect((await appClientIDs(stack.db)).has("frank-c")).toBe(false);
    expect((await todoTableRows(stack.db, "erin")).map((todo) => todo.id)).toEqual(["e1"]);
  });
});

describe("the app server's connections ended by PostgreSQL", () => {
  it("do not crash the process: the next push opens another and goes through", async () => {
    const kim = client("kim");
    await kim.mutate.createTodo({ id: "kick-1", text: "before", done: false, sort: 1 });
    await sync(kim);
    // Last in this file: the cases above compare the whole table.
    // An operator ends the app server's connections (as a restart of PostgreSQL would).
    const ended = await stack.db.sql(
      "SELECT count(*)::int AS n FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1) AS t",
      [APP_CONNECTION_NAME],
    );
    expect(ended.rows[0].n).toBeGreaterThan(0);
    await kim.mutate.createTodo({ id: "kick-2", text: "after", done: false, sort: 2 });
    await sync(kim);
    expect((await todosOf(kim)).map((todo) => todo.id)).toEqual(["kick-1", "kick-2"]);
  });
});
