import { type Mutator, MutatorError } from "@weir/host-core";
import { Replicache } from "replicache";
import { afterEach, describe, expect, it } from "vitest";
import { mutators } from "../mutators.js";
import { todoSchema } from "../schema.js";
import { replicacheMutators } from "./replicache-mutators.js";

// The browser side of the shared mutators, on the stock Replicache client with no server.

const open: Replicache[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((rep) => rep.close()));
});

let names = 0;
function local<M extends Record<string, Mutator>>(defs: M, userID = "alice") {
  const rep = new Replicache({
    name: `local-${++names}-${Date.now()}`,
    kvStore: "mem",
    mutators: replicacheMutators(defs, { schema: todoSchema, userID }),
    pullInterval: null,
    logLevel: "error",
  });
  open.push(rep);
  return rep;
}

const snapshot = (rep: Replicache) => rep.query((tx) => tx.scan().entries().toArray());

describe("replicacheMutators", () => {
  it("writes rows under <table>/<pk> in their wire form, with the owner from the claims", async () => {
    const rep = local(mutators);
    await rep.mutate.createTodo({ id: "t1", text: "  tidy up ", done: false, sort: 2 });
    await rep.mutate.updateTodo({ id: "t1", done: true });
    expect(await snapshot(rep)).toEqual([
      ["todo/t1", { id: "t1", owner: "alice", text: "tidy up", done: true, sort: 2 }],
    ]);
    await rep.mutate.deleteTodo({ id: "t1" });
    await rep.mutate.deleteTodo({ id: "t1" });
    expect(await snapshot(rep)).toEqual([]);
  });

  it("rejects a refused mutation and writes nothing", async () => {
    const rep = local(mutators);
    await rep.mutate.createTodo({ id: "t1", text: "one", done: false, sort: 1 });
    await expect(rep.mutate.createTodo({ id: "t1", text: "again", done: false, sort: 1 })).rejects.toThrow(
      MutatorError,
    );
    await expect(rep.mutate.updateTodo({ id: "t1", owner: "bob" })).rejects.toThrow(/invalid arguments/);
    expect(await snapshot(rep)).toEqual([
      ["todo/t1", { id: "t1", owner: "alice", text: "one", done: false, sort: 1 }],
    ]);
  });

  it("runs a mutator again from the start when it reads a row not yet fetched, keeping one run's writes", async () => {
    let runs = 0;
    const defs = {
      // Inserts before it reads: a run that kept the writes of an earlier, stopped run would
      // find its own row and refuse.
      move(tx: Parameters<Mutator>[0], args: unknown): void {
        runs++;
        const { from, to } = args as { from: string; to: string };
        tx.insert("todo", { id: "log", owner: "", text: "moved", done: false, sort: 0 });
        const source = tx.get("todo", from);
        if (!source) throw new MutatorError(`no ${from}`);
        const target = tx.get("todo", to);
        tx.upsert("todo", { ...source, id: to, sort: (target?.sort as number | undefined) ?? 0 });
        tx.delete("todo", from);
      },
    };
    const rep = local({ ...mutators, ...defs });
    await rep.mutate.createTodo({ id: "a", text: "a", done: false, sort: 5 });
    await rep.mutate.createTodo({ id: "b", text: "b", done: true, sort: 9 });
    await rep.mutate.move({ from: "a", to: "b" });
    // Stopped at todo/log (the insert checks it is free), todo/a and todo/b, then complete.
    expect(runs).toBe(4);
    expect(await snapshot(rep)).toEqual([
      ["todo/b", { id: "b", owner: "alice", text: "a", done: false, sort: 9 }],
      ["todo/log", { id: "log", owner: "", text: "moved", done: false, sort: 0 }],
    ]);
  });

  it("keeps raw SQL on the server", async () => {
    const rep = local({
      sql(tx: Parameters<Mutator>[0]): void {
        tx.exec("DELETE FROM todo");
      },
    });
    await expect(rep.mutate.sql(null)).rejects.toThrow(/only on the server/);
  });
});
