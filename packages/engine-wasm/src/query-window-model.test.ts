import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ClientRows } from "../test/chat.js";
import { DATABASES, testEngine } from "../test/databases.js";
import { Namespace } from "../test/fixtures.js";
import { rankedItemSchema, windowNow as windowNowOf, windowOfA } from "../test/ranked-items.js";
import type { QueryPatchOp } from "./types.js";

const schema = rankedItemSchema;

const ITEMS = 3200;
const ORDERS: Array<{ order: [string, "asc" | "desc"][]; sql: string }> = [
  { order: [["rank", "asc"]], sql: "rank ASC, id ASC" },
  { order: [["rank", "desc"]], sql: "rank DESC, id ASC" },
  { order: [["id", "desc"]], sql: "id DESC" },
  {
    order: [
      ["note", "asc"],
      ["rank", "desc"],
    ],
    sql: "note ASC, rank DESC, id ASC",
  },
];

/** A write of one row: it moves between kinds, takes a rank (or none) or a note, leaves, or comes. */
const write = fc.record({
  op: fc.constantFrom("kind", "rank", "null", "note", "delete", "insert"),
  row: fc.nat(ITEMS + 100),
  value: fc.integer({ min: -5, max: 60 }),
});

const scenario = fc.record({
  salt: fc.integer({ min: 1, max: 1000 }),
  limit: fc.integer({ min: 2049, max: 2300 }),
  order: fc.constantFrom(...ORDERS),
  batches: fc.array(fc.array(write, { maxLength: 12 }), { minLength: 1, maxLength: 8 }),
});

// A model of a window of more than 2,048 rows: read in pages with no time (writes between them),
// then kept up to date from its bound after each batch of writes. After every whole answer the
// client holds what SQLite's own ORDER BY ... LIMIT holds, and each row once.
describe.each(DATABASES)(
  "a window read in pages and kept from its bound, against SQLite, on $kind",
  ({ open }) => {
    it("holds the window's rows after every whole answer", async () => {
      const engine = await testEngine();
      await fc.assert(
        fc.asyncProperty(scenario, async ({ salt, limit, order, batches }) => {
          const ns = new Namespace(engine, open(), schema);
          ns.sql(
            "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < ?) " +
              "INSERT INTO item SELECT printf('i%05d', i), CASE WHEN (i * ?) % 3 = 0 THEN 'b' ELSE 'a' END, " +
              "CASE WHEN (i * ?) % 11 = 0 THEN NULL ELSE (i * ?) % 50 + ((i * ?) % 4) / 4.0 END, " +
              "'n' || ((i * ?) % 40) FROM n",
            [ITEMS, salt, salt, salt, salt, salt],
          );
          const apply = (batch: Array<{ op: string; row: number; value: number }>) =>
            ns.mutate("g", "c1", (run) => {
              for (const { op, row, value } of batch) {
                const id = `i${String(row).padStart(5, "0")}`;
                if (op === "kind")
                  run("UPDATE item SET kind = CASE kind WHEN 'a' THEN 'b' ELSE 'a' END WHERE id = ?", [id]);
                else if (op === "rank") run("UPDATE item SET rank = ? WHERE id = ?", [value, id]);
                else if (op === "null") run("UPDATE item SET rank = NULL WHERE id = ?", [id]);
                else if (op === "note") run("UPDATE item SET note = ? WHERE id = ?", [`n${value}`, id]);
                else if (op === "delete") run("DELETE FROM item WHERE id = ?", [id]);
                else run("INSERT OR IGNORE INTO item VALUES (?, 'a', ?, ?)", [id, value, `n${value}`]);
              }
            });
          const windowNow = () => windowNowOf(ns, order.sql, limit);
          const client = new ClientRows();
          const put = windowOfA(order.order, limit);
          let patch: QueryPatchOp[] = [put];
          let next = 0;
          /** Pulls with no time until an answer is whole, a batch of writes after each part while the window is read in pages. */
          const pullAll = (between: boolean) => {
            for (let pulls = 0; pulls < 60; pulls++) {
              const result = ns.pull({
                cookie: client.cookie,
                queries: { patch },
                queryBudgetMs: 60_000,
                answerMs: 0,
              });
              patch = [];
              client.apply(result.json as never, schema);
              if (!result.more) return;
              if (between && next < batches.length) apply(batches[next++]!);
            }
            throw new Error("no whole answer in 60 pulls");
          };
          pullAll(true);
          expect(client.rows).toEqual(windowNow());
          for (; next < batches.length; next++) {
            apply(batches[next]!);
            pullAll(false);
            expect(client.rows).toEqual(windowNow());
          }
          ns.pull({
            cookie: client.cookie,
            queries: { patch: [{ op: "del", hash: "window" }] },
            queryBudgetMs: 60_000,
          });
          expect(ns.db.adapter.query("SELECT count(*) FROM _weir_group_rows", [])).toEqual([[0]]);
        }),
        { numRuns: 30 },
      );
    }, 120_000);
  },
);
