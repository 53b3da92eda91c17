import { isDeepStrictEqual } from "node:util";
import type { Todo } from "@weir/example-todo/schema";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { sync, type TodoClient, todoClient, todosOf } from "../test/todo-client.js";
import { startTodoStack, type TodoStack } from "../test/todo-stack.js";

// Another program writes the table directly (psql, a batch job, another service): the rows reach
// weir by logical replication, and the buffer's commit notifies weir in process, which ingests
// and wakes the clients' sockets. Polling is set far beyond the test's time limit, so every
// wake here comes from that notify.

let stack: TodoStack;
const clients: TodoClient[] = [];
const sockets: WebSocket[] = [];

beforeAll(async () => {
  stack = await startTodoStack({ pollMs: 600_000 });
});

afterAll(async () => {
  await stack?.close();
});

afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.close();
  await Promise.all(clients.splice(0).map((client) => client.close()));
});

/** The wakes a client's socket has received, as the page's socket receives them. */
interface Wakes {
  count(): number;
  /** Resolves once more than `seen` wakes have come. */
  after(seen: number): Promise<void>;
}

/** The client's wake socket, as the page opens it. */
async function wakeSocket(rep: TodoClient, user: string): Promise<Wakes> {
  const url = `${stack.base.replace(/^http/, "ws")}/wake?clientID=${encodeURIComponent(rep.clientID)}&auth=${user}`;
  const socket = new WebSocket(url);
  sockets.push(socket);
  await new Promise<void>((resolve, reject) => {
    socket.once("open", () => resolve());
    socket.once("error", reject);
  });
  let wakes = 0;
  const waiting = new Set<() => void>();
  socket.on("message", (data) => {
    if (data.toString() !== "wake") return;
    wakes++;
    for (const wake of waiting) wake();
  });
  return {
    count: () => wakes,
    after: (seen) =>
      new Promise<void>((resolve) => {
        const check = () => {
          if (wakes <= seen) return;
          waiting.delete(check);
          resolve();
        };
        waiting.add(check);
        check();
      }),
  };
}

/**
 * As the page does: pulls on each wake after the `seen`th until the client holds `expected`. A
 * wake carries nothing, and one may still be on its way for the client's own push (its rows come
 * back through replication as any write does, and wake their readers), so a pull may come too
 * early; each pull after it needs another wake, so without the outside write's wake this never
 * ends.
 */
async function pullOnWakes(rep: TodoClient, wakes: Wakes, seen: number, expected: Todo[]): Promise<void> {
  for (let count = seen; ; ) {
    await wakes.after(count);
    count = wakes.count();
    await rep.pull({ now: true });
    // The pull's rows reach the client's store shortly after the call.
    for (let check = 0; check < 10; check++) {
      if (isDeepStrictEqual(await todosOf(rep), expected)) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

describe("a row written to PostgreSQL by another program", () => {
  it("wakes a Replicache client, which pulls it; updates and deletes follow; other users' rows stay hidden", async () => {
    const carol = todoClient(stack.base, "carol");
    clients.push(carol);
    await sync(carol);
    const wakes = await wakeSocket(carol, "carol");

    let seen = wakes.count();
    await stack.db.sql(
      "INSERT INTO todo (id, owner, text, done, sort) VALUES ('p1', 'carol', 'from psql', false, 1), ('p2', 'dan', 'not carol''s', false, 2)",
    );
    await pullOnWakes(carol, wakes, seen, [
      { id: "p1", owner: "carol", text: "from psql", done: false, sort: 1 },
    ]);

    seen = wakes.count();
    await stack.db.sql("UPDATE todo SET done = true, text = 'edited in psql' WHERE id = 'p1'");
    await pullOnWakes(carol, wakes, seen, [
      { id: "p1", owner: "carol", text: "edited in psql", done: true, sort: 1 },
    ]);

    // A todo of Carol's own, edited from outside while her client holds it.
    await carol.mutate.createTodo({ id: "c1", text: "mine", done: false, sort: 3 });
    await sync(carol);
    seen = wakes.count();
    await stack.db.sql(
      "BEGIN; DELETE FROM todo WHERE id = 'p1'; UPDATE todo SET text = 'renamed outside' WHERE id = 'c1'; COMMIT",
    );
    await pullOnWakes(carol, wakes, seen, [
      { id: "c1", owner: "carol", text: "renamed outside", done: false, sort: 3 },
    ]);
    // Her client may go on editing the row the outside writer changed.
    await carol.mutate.updateTodo({ id: "c1", done: true });
    await sync(carol);
    expect((await stack.db.sql("SELECT text, done FROM todo WHERE id = 'c1'")).rows).toEqual([
      { text: "renamed outside", done: true },
    ]);

    const dan = todoClient(stack.base, "dan");
    clients.push(dan);
    await sync(dan);
    expect((await todosOf(dan)).map((todo) => todo.id)).toEqual(["p2"]);
  });

  it("reaches a client after a restart: rows written while the server was down, then the client's own pushes", async () => {
    const erin = todoClient(stack.base, "erin");
    await erin.mutate.createTodo({ id: "e1", text: "before the restart", done: false, sort: 1 });
    await sync(erin);
    await erin.close();

    await stack.restart(async () => {
      await stack.db.sql(
        "INSERT INTO todo (id, owner, text, done, sort) VALUES ('e2', 'erin', 'while it was down', false, 2)",
      );
      await stack.db.sql("UPDATE todo SET done = true WHERE id = 'e1'");
    });

    // A page opened after the restart. The rows written while the server was down reach it once
    // the reader has replicated them (durably) and the namespace has ingested them: it pulls
    // until then, as on a wake.
    const again = todoClient(stack.base, "erin");
    clients.push(again);
    await sync(again);
    await expect
      .poll(async () => {
        await again.pull({ now: true });
        return todosOf(again);
      })
      .toEqual([
        { id: "e1", owner: "erin", text: "before the restart", done: true, sort: 1 },
        { id: "e2", owner: "erin", text: "while it was down", done: false, sort: 2 },
      ]);
    await again.mutate.deleteTodo({ id: "e2" });
    await sync(again);
    expect((await stack.db.sql("SELECT id FROM todo WHERE owner = 'erin'")).rows).toEqual([{ id: "e1" }]);
  });
});
