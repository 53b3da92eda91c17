import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sync, type TodoClient, todoClient, todosOf } from "../test/todo-client.js";
import { startTodoStack, type TodoStack } from "../test/todo-stack.js";

// `sort` is `double precision NOT NULL`: PostgreSQL takes NaN and Infinity, a JSON number has
// neither. Such a row is quarantined (counted, logged); every other change, and pushes, go on.

const ADMIN_KEY = "postgres-todo-admin";
let stack: TodoStack;
const clients: TodoClient[] = [];

beforeAll(async () => {
  stack = await startTodoStack({ adminKey: ADMIN_KEY });
});

afterAll(async () => {
  await Promise.all(clients.map((client) => client.close()));
  await stack?.close();
});

async function upstreamStatus(): Promise<{ stopped: unknown; quarantined: { rows: number } }> {
  const response = await fetch(`${stack.base}/admin/status`, { headers: { "x-admin-key": ADMIN_KEY } });
  expect(response.status).toBe(200);
  return ((await response.json()) as { upstream: never }).upstream;
}

describe("NaN and Infinity in a NOT NULL float column", () => {
  it("leave the namespace serving: a later row and a push both succeed", async () => {
    const dave = todoClient(stack.base, "dave");
    clients.push(dave);
    await stack.db.sql(
      "INSERT INTO todo VALUES ('n1', 'dave', 'one', false, 1), ('n2', 'dave', 'two', false, 2)",
    );
    await sync(dave);
    expect((await todosOf(dave)).map((todo) => todo.id)).toEqual(["n1", "n2"]);

    await stack.db.sql("UPDATE todo SET sort = 'NaN' WHERE id = 'n1'");
    await stack.db.sql("UPDATE todo SET sort = 'Infinity' WHERE id = 'n2'");
    await stack.db.sql("INSERT INTO todo VALUES ('n3', 'dave', 'later', false, 3)");
    await dave.mutate.createTodo({ id: "n4", text: "pushed", done: false, sort: 4 });
    await sync(dave);
    expect((await todosOf(dave)).map((todo) => todo.id)).toEqual(["n3", "n4"]);
    const status = await upstreamStatus();
    expect(status.stopped).toBeNull();
    expect(status.quarantined.rows).toBe(2);

    // Fixed in PostgreSQL, the rows come back.
    await stack.db.sql("UPDATE todo SET sort = 0 WHERE id IN ('n1', 'n2')");
    await sync(dave);
    for (let i = 0; i < 50 && (await todosOf(dave)).length < 4; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      await dave.pull({ now: true });
    }
    expect((await todosOf(dave)).map((todo) => todo.id)).toEqual(["n1", "n2", "n3", "n4"]);
  });
});
