import { describe, expect, it } from "vitest";
import { freshEngine, openBetterSqlite } from "../test/databases.js";
import { Namespace, todoSchema } from "../test/fixtures.js";
import type { BatchEntry } from "./engine.js";

const MiB = 1024 * 1024;
const BATCH = 10_000;

/** A batch of `count` mutations spread over `clients` clients, each client's ids in order. */
function batch(count: number, clients: number): BatchEntry[] {
  return Array.from({ length: count }, (_, i) => ({
    clientID: `client-${i % clients}`,
    mutationID: Math.floor(i / clients) + 1,
  }));
}

describe("the engine's memory", () => {
  it.each([1, 1_000])("grows linearly with a push batch (%i clients)", async (clients) => {
    // No ceiling, so the figure is what the calls themselves needed.
    const engine = await freshEngine({ memoryCeilingBytes: Number.POSITIVE_INFINITY });
    const ns = new Namespace(engine, openBetterSqlite(), todoSchema);
    const mutations = batch(BATCH, clients);
    ns.db.transaction(() => {
      engine.claimGroup(ns.db.adapter, "g", "u");
      const preflights = engine.preflightBatch(ns.db.adapter, "g", mutations);
      expect(preflights.every((p) => p.status === "apply")).toBe(true);
      engine.finalizeBatch(ns.db.adapter, "g", mutations);
    });
    expect(engine.memoryBytes()).toBeLessThanOrEqual(8 * MiB);
    const pulled = ns.pull({ cookie: 0 });
    expect(Object.keys(pulled.json.lastMutationIDChanges ?? {})).toHaveLength(clients);
    expect(engine.memoryBytes()).toBeLessThanOrEqual(8 * MiB);
  });

  it("stays small for a pull of many changes", async () => {
    const engine = await freshEngine({ memoryCeilingBytes: Number.POSITIVE_INFINITY });
    const ns = new Namespace(engine, openBetterSqlite(), todoSchema);
    const cookie = ns.pull({ cookie: null }).cookie;
    ns.mutate("g", "writer", (sql) => {
      for (let i = 0; i < BATCH; i++) sql("INSERT INTO todo VALUES (?, 'u', 'text', 0, ?)", [`t${i}`, i]);
    });
    const pulled = ns.pull({ cookie, maxChangeRows: BATCH, maxChangeBytes: 100 * MiB });
    expect(pulled.puts).toBe(BATCH);
    expect(engine.memoryBytes()).toBeLessThanOrEqual(16 * MiB);
  });

  it("is given back after a call that left it past the ceiling, and calls go on", async () => {
    const engine = await freshEngine({ memoryCeilingBytes: MiB });
    const ns = new Namespace(engine, openBetterSqlite(), todoSchema);
    const before = engine.memoryBytes();
    ns.db.transaction(() => {
      engine.claimGroup(ns.db.adapter, "g", "u");
      engine.preflightBatch(ns.db.adapter, "g", batch(BATCH, 1));
    });
    expect(engine.renewals).toBe(1);
    expect(engine.memoryBytes()).toBeLessThanOrEqual(before);
    // The fresh instance knows the schema again and the database's state is untouched.
    ns.mutate("g", "c", (sql) => sql("INSERT INTO todo VALUES ('t1', 'u', 'x', 0, 1)"));
    const pulled = ns.pull({ cookie: null });
    expect(pulled.json.rowsPatch).toContainEqual(expect.objectContaining({ op: "put", tableName: "todo" }));
    expect(pulled.json.lastMutationIDChanges).toEqual({ c: 1 });
  });
});
