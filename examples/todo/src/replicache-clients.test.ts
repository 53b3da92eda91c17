import { createServer } from "@weir/node-host";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { sync, type TodoClient, todoClient } from "../test/todo-client.js";
import type { Todo } from "./schema.js";
import { todoConfig } from "./todo-config.js";

// The stock Replicache client (v15, memory store) against a running weir Node host serving
// the todo app's config: real HTTP on a random loopback port, real SQLite.

type Server = ReturnType<typeof createServer>;

let server: Server;
let base: string;
const clients: TodoClient[] = [];

beforeAll(async () => {
  server = createServer({ ...todoConfig, storage: "memory", logger: { log: () => {} } });
  const { url } = await server.listen({ port: 0, host: "127.0.0.1" });
  base = `${url.replace(/\/$/, "")}/todo`;
});

afterAll(async () => {
  await server.close();
});

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
});

let probes = 0;

/** A new client in a new client group (its own memory store), closed after each test. */
function client(user: string, pusherSpy?: (body: string) => void): TodoClient {
  const rep = todoClient(base, user, pusherSpy);
  clients.push(rep);
  return rep;
}

async function todos(rep: TodoClient): Promise<Todo[]> {
  const entries = await rep.query((tx) => tx.scan({ prefix: "todo/" }).entries().toArray());
  const rows = entries as unknown as [string, Todo][];
  for (const [key, todo] of rows) expect(key).toBe(`todo/${todo.id}`);
  return rows.map(([, todo]) => todo).sort((a, b) => a.sort - b.sort);
}

/** A full pull for a brand-new client group: what the server holds for this user right now. */
async function serverView(user: string): Promise<{ cookie: number; todos: Todo[] }> {
  const res = await fetch(`${base}/replicache/pull`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: user },
    body: JSON.stringify({
      pullVersion: 1,
      clientGroupID: `probe-${user}-${++probes}`,
      cookie: null,
      profileID: "probe",
      schemaVersion: "",
    }),
  });
  expect(res.status).toBe(200);
  const body = (await res.json()) as {
    cookie: number;
    patch: Array<{ op: string; key?: string; value?: Todo }>;
  };
  const puts = body.patch.filter((op) => op.op === "put");
  return { cookie: body.cookie, todos: puts.map((op) => op.value!).sort((a, b) => a.sort - b.sort) };
}

describe("the stock Replicache client against weir", () => {
  it("two clients in two groups create, update and delete through mutators and converge", async () => {
    const a = client("alice");
    const b = client("alice");
    expect(await a.clientGroupID).not.toBe(await b.clientGroupID);

    await a.mutate.createTodo({ id: "a1", text: "buy milk", done: false, sort: 1 });
    await a.mutate.createTodo({ id: "a2", text: "walk the dog", done: false, sort: 2 });
    await b.mutate.createTodo({ id: "b1", text: "write tests", done: false, sort: 3 });
    // Local first: each client sees its own writes before any sync.
    expect((await todos(a)).map((todo) => todo.id)).toEqual(["a1", "a2"]);
    expect((await todos(b)).map((todo) => todo.id)).toEqual(["b1"]);

    await sync(a);
    await sync(b);
    await sync(a);
    expect((await todos(a)).map((todo) => todo.id)).toEqual(["a1", "a2", "b1"]);

    // Each edits the other's rows.
    await b.mutate.updateTodo({ id: "a1", done: true });
    await a.mutate.updateTodo({ id: "b1", text: "write more tests" });
    await b.mutate.deleteTodo({ id: "a2" });
    await sync(a);
    await sync(b);
    await sync(a);

    const expected: Todo[] = [
      { id: "a1", owner: "alice", text: "buy milk", done: true, sort: 1 },
      { id: "b1", owner: "alice", text: "write more tests", done: false, sort: 3 },
    ];
    expect(await todos(a)).toEqual(expected);
    expect(await todos(b)).toEqual(expected);
    expect((await serverView("alice")).todos).toEqual(expected);
  });

  it("runs a refused mutation nowhere: bad arguments reject locally and change nothing on the server", async () => {
    const a = client("carol");
    await expect(a.mutate.createTodo({ id: "c1", text: "   ", done: false, sort: 1 })).rejects.toThrow(
      /invalid arguments/,
    );
    await expect(a.mutate.updateTodo({ id: "nope", done: true })).rejects.toThrow(/no todo nope/);
    expect(await todos(a)).toEqual([]);
    expect((await serverView("carol")).todos).toEqual([]);
  });

  it("applies a mutation pushed twice once", async () => {
    const pushes: string[] = [];
    const a = client("dave", (body) => pushes.push(body));
    await a.mutate.createTodo({ id: "d1", text: "once", done: false, sort: 1 });
    await sync(a);
    const createPush = pushes.find((body) => body.includes('"createTodo"'));
    expect(createPush).toBeDefined();

    await a.mutate.deleteTodo({ id: "d1" });
    await sync(a);
    const before = await serverView("dave");
    expect(before.todos).toEqual([]);

    // The network delivers the first push again (a retry after a lost response). Run again, it
    // would bring d1 back; its id is at or below the client's last mutation id, so it is skipped.
    const res = await fetch(`${base}/replicache/push`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "dave" },
      body: createPush,
    });
    expect(res.status).toBe(200);
    const after = await serverView("dave");
    expect(after.todos).toEqual([]);
    expect(after.cookie).toBe(before.cookie);

    await sync(a);
    expect(await todos(a)).toEqual([]);
  });

  it("never shows a client the rows its visibility filter hides", async () => {
    const alice = client("erin");
    const bob = client("frank");
    await bob.mutate.createTodo({ id: "f1", text: "frank's chore", done: false, sort: 1 });
    await sync(bob);
    // Erin writes after Bob's first pull, so his next pull reads her change from the change
    // log: the filter must hold for incremental pulls, not only for full ones.
    await alice.mutate.createTodo({ id: "e1", text: "erin's secret", done: false, sort: 1 });
    await sync(alice);
    await sync(bob);
    expect((await todos(bob)).map((todo) => todo.id)).toEqual(["f1"]);

    // Bob aims his mutators at Erin's row by id: the server refuses them (his client has no
    // such row either), and her row is untouched.
    await expect(bob.mutate.updateTodo({ id: "e1", text: "hacked" })).rejects.toThrow(/no todo e1/);
    await bob.mutate.deleteTodo({ id: "e1" });
    const forged = await fetch(`${base}/replicache/push`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "frank" },
      body: JSON.stringify({
        pushVersion: 1,
        clientGroupID: await bob.clientGroupID,
        profileID: "forged",
        schemaVersion: "",
        mutations: [
          {
            clientID: "frank-forger",
            id: 1,
            name: "updateTodo",
            args: { id: "e1", text: "hacked" },
            timestamp: 1,
          },
        ],
      }),
    });
    expect(forged.status).toBe(200);
    await sync(bob);
    await sync(alice);

    expect(await todos(bob)).toEqual([
      { id: "f1", owner: "frank", text: "frank's chore", done: false, sort: 1 },
    ]);
    expect(await todos(alice)).toEqual([
      { id: "e1", owner: "erin", text: "erin's secret", done: false, sort: 1 },
    ]);
    expect((await serverView("frank")).todos.map((todo) => todo.owner)).toEqual(["frank"]);
    expect((await serverView("erin")).todos.map((todo) => todo.text)).toEqual(["erin's secret"]);
  });

  it("refuses another user's client group", async () => {
    const erin = client("erin");
    await sync(erin);
    const res = await fetch(`${base}/replicache/pull`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "frank" },
      body: JSON.stringify({
        pullVersion: 1,
        clientGroupID: await erin.clientGroupID,
        cookie: null,
        profileID: "x",
        schemaVersion: "",
      }),
    });
    expect(res.status).toBe(403);
  });
});
