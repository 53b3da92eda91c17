import { startPostgres, type TestPostgres } from "@weir/postgres-testing";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appClientIDs, todoTableRows } from "../test/todo-table-rows.js";
import { type AppServer, startAppServer } from "./app-server.js";
import { ensureTodoTable } from "./todo-table.js";

// The app server's mutate endpoint on its own, called as weir calls it: the same push may come
// again (weir retries after a timeout, or after it lost the answer), at once or later, and bad
// input is refused without writing anything.

let db: TestPostgres;
let pool: pg.Pool;
let app: AppServer;

beforeAll(async () => {
  db = await startPostgres();
  pool = new pg.Pool({ connectionString: db.url, max: 4 });
  // A connection still closing when the cluster stops gets its FATAL: not this test's failure.
  pool.on("error", () => {});
  await ensureTodoTable(pool);
  app = await startAppServer({ pool, host: "127.0.0.1", port: 0 });
});

afterAll(async () => {
  await app?.close();
  await pool?.end();
  await db?.stop();
});

let groups = 0;

function mutateRequest(clientID: string, mutations: Array<{ id: number; name: string; args: unknown }>) {
  return {
    clientGroupID: `group-${++groups}`,
    pushVersion: 1,
    mutations: mutations.map((m) => ({ type: "custom", clientID, id: m.id, name: m.name, args: [m.args] })),
  };
}

async function send(
  body: unknown,
  headers: Record<string, string> = { authorization: "alice", "x-weir-namespace": "todo" },
  method = "POST",
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(app.url, {
    method,
    headers: { "content-type": "application/json", ...headers },
    ...(method === "POST" ? { body: typeof body === "string" ? body : JSON.stringify(body) } : {}),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

const results = (answer: { body: Record<string, unknown> }) =>
  (answer.body.mutations as Array<{ id: { id: number }; result: unknown }>).map((m) => [m.id.id, m.result]);

describe("the app server's mutate endpoint", () => {
  it("applies a push sent again nothing twice, one after the other or several at once", async () => {
    const create = mutateRequest("c1", [
      { id: 1, name: "createTodo", args: { id: "t1", text: "first", done: false, sort: 1 } },
      { id: 2, name: "createTodo", args: { id: "t2", text: "second", done: false, sort: 2 } },
    ]);
    const answers = await Promise.all([send(create), send(create), send(create)]);
    for (const answer of answers) {
      expect(answer.status).toBe(200);
      expect(results(answer)).toEqual([
        [1, {}],
        [2, {}],
      ]);
      expect(typeof answer.body.watermark).toBe("number");
    }
    const later = {
      ...create,
      mutations: [{ type: "custom", clientID: "c1", id: 3, name: "deleteTodo", args: [{ id: "t1" }] }],
    };
    expect(results(await send(later))).toEqual([[3, {}]]);

    // Run again, the first push would bring t1 back and refuse t2 as existing.
    const again = await send(create);
    expect(again.status).toBe(200);
    expect(results(again)).toEqual([
      [1, {}],
      [2, {}],
    ]);
    expect(await todoTableRows(db, "alice")).toEqual([
      { id: "t2", owner: "alice", text: "second", done: false, sort: 2 },
    ]);
    expect((await appClientIDs(db)).get("c1")).toBe(3);
  });

  it("refuses bad arguments and another user's todo as application errors, writing nothing of them", async () => {
    await send(
      mutateRequest("a1", [
        { id: 1, name: "createTodo", args: { id: "own", text: "alice's", done: false, sort: 1 } },
      ]),
    );
    const request = mutateRequest("b1", [
      { id: 1, name: "createTodo", args: { id: "x1", text: "", done: false, sort: 1 } },
      { id: 2, name: "createTodo", args: { id: "x2", text: "ok", done: false, sort: 1, owner: "alice" } },
      { id: 3, name: "updateTodo", args: { id: "own", done: true } },
      { id: 4, name: "deleteTodo", args: { id: "own" } },
      { id: 5, name: "createTodo", args: { id: "own", text: "taken", done: false, sort: 1 } },
      { id: 6, name: "noSuchMutator", args: {} },
      { id: 7, name: "createTodo", args: { id: "b-ok", text: "bob's", done: false, sort: 2 } },
    ]);
    const answer = await send(request, { authorization: "Bearer bob", "x-weir-namespace": "todo" });
    expect(answer.status).toBe(200);
    const byID = new Map(results(answer) as Array<[number, { error?: string; message?: string }]>);
    expect(byID.get(1)?.message).toMatch(/invalid arguments/);
    expect(byID.get(2)?.message).toMatch(/invalid arguments/);
    expect(byID.get(3)).toEqual({ error: "app", message: "no todo own" });
    expect(byID.get(4)).toEqual({});
    expect(byID.get(5)).toEqual({ error: "app", message: "todo own already exists" });
    expect(byID.get(6)).toEqual({ error: "app", message: "no mutator noSuchMutator" });
    expect(byID.get(7)).toEqual({});
    expect((await todoTableRows(db)).filter((todo) => ["own", "x1", "x2", "b-ok"].includes(todo.id))).toEqual(
      [
        { id: "own", owner: "alice", text: "alice's", done: false, sort: 1 },
        { id: "b-ok", owner: "bob", text: "bob's", done: false, sort: 2 },
      ],
    );
    expect((await appClientIDs(db)).get("b1")).toBe(7);
  });

  it("answers a clear 4xx to a caller without a user, another namespace, a bad body or method, and writes nothing", async () => {
    const request = mutateRequest("z1", [
      { id: 1, name: "createTodo", args: { id: "z", text: "z", done: false, sort: 1 } },
    ]);
    expect((await send(request, { "x-weir-namespace": "todo" })).status).toBe(403);
    expect((await send(request, { authorization: "alice", "x-weir-namespace": "other" })).status).toBe(403);
    expect((await send(request, { authorization: "alice" })).status).toBe(400);
    const notJson = await send("{", { authorization: "alice", "x-weir-namespace": "todo" });
    expect(notJson).toMatchObject({ status: 400, body: { error: "bad_request" } });
    const badShape = await send({ clientGroupID: "g", mutations: "no" });
    expect(badShape).toMatchObject({ status: 400, body: { error: "bad_request" } });
    expect((await send(null, undefined, "GET")).status).toBe(405);
    const elsewhere = await fetch(app.url.replace(/\/mutate$/, "/other"), { method: "POST", body: "{}" });
    expect(elsewhere.status).toBe(404);
    expect((await todoTableRows(db)).some((todo) => todo.id === "z")).toBe(false);
    expect((await appClientIDs(db)).has("z1")).toBe(false);
  });
});
