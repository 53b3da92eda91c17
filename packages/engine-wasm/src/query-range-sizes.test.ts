import { afterEach, describe, expect, it, vi } from "vitest";
import { ClientRows } from "../test/chat.js";
import { DATABASES, testEngine } from "../test/databases.js";
import { Namespace } from "../test/fixtures.js";
import { RANGE_ROWS } from "./abi.js";
import { QueryPages, QueryPageTurn } from "./query-pages.js";
import { RangeSizes } from "./range-sizes.js";
import type { PullResult, QueryPatchOp, Schema } from "./types.js";
import { WorkMeter } from "./work-meter.js";

// A range of a query read in ranges whose step passes its budget (a loaded machine, rows that
// cost more than most) is read again half as large, in a run of the pull after a turn, where it
// refused the query; a range within a quarter of the budget lets the next read twice as many.
// The clock here moves with the rows the meter counts, so a range's time is its rows'. (The
// meter's turns, down to the fewest rows and the refusal there: work-meter.test.ts.)

const schema: Schema = {
  tables: {
    item: { columns: { id: "string" }, primaryKey: ["id"] },
    tag: { columns: { id: "string", itemId: "string" }, primaryKey: ["id"] },
  },
};
const everyItemTagged = {
  table: "item",
  orderBy: [["id", "asc"]],
  related: [{ correlation: { parentField: ["id"], childField: ["itemId"] }, subquery: { table: "tag" } }],
};
const put: QueryPatchOp = { op: "put", hash: "t", name: "everyItemTagged", args: [], ast: everyItemTagged };

/** A clock of `msPerRow` for each row the meter counts. */
function rowClock() {
  const clock = { msPerRow: 0, now: 0 };
  const meter = WorkMeter.prototype as unknown as { tick(): number };
  const tick = meter.tick;
  vi.spyOn(meter, "tick").mockImplementation(function (this: unknown) {
    clock.now += clock.msPerRow;
    return tick.call(this);
  });
  vi.spyOn(performance, "now").mockImplementation(() => clock.now);
  return clock;
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe.each(DATABASES)("the size of a query's ranges on $kind", ({ open }) => {
  async function seeded() {
    const engine = await testEngine();
    const ns = new Namespace(engine, open() as never, schema);
    ns.sql(
      "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < 5000) " +
        "INSERT INTO item SELECT printf('i%05d', i) FROM n",
      [],
    );
    ns.sql("INSERT INTO tag SELECT 'x' || id, id FROM item UNION ALL SELECT 'y' || id, id FROM item", []);
    const client = new ClientRows();
    const ranges = new RangeSizes();
    /** Pulls with no time, each run again after a turn as a host does, until the query is whole. */
    const pullWhole = (patch: QueryPatchOp[]) => {
      const sizes: number[] = [];
      let turns = 0;
      for (let pulls = 0; pulls < 100; pulls++) {
        const pages = new QueryPages({ pageMs: 60_000, ranges });
        let result: PullResult & { json: unknown };
        for (;;) {
          try {
            result = ns.pull({
              cookie: client.cookie,
              queries: { patch },
              queryBudgetMs: 30,
              queryTotalBudgetMs: 60_000,
              answerMs: 0,
              queryPages: pages,
            });
            break;
          } catch (error) {
            if (!(error instanceof QueryPageTurn)) throw error;
            turns++;
          }
        }
        patch = [];
        client.apply(result.json as never, schema);
        sizes.push(ranges.of("g", "t"));
        if (!result.more) return { sizes, turns };
      }
      throw new Error("no whole answer in 100 pulls");
    };
    return { engine, ns, client, pullWhole };
  }

  it("reads ranges half as large once one passes its step's budget, and the query is answered whole", async () => {
    const { engine, ns, client, pullWhole } = await seeded();
    const clock = rowClock();
    // 10 µs a row: a range of 2,048 items with their tags (6,144 rows) takes 61 ms, past 30.
    clock.msPerRow = 0.01;
    const { sizes, turns } = pullWhole([put]);
    expect(turns).toBeGreaterThan(0);
    expect(Math.max(...sizes)).toBeLessThan(RANGE_ROWS);
    expect(client.rows.size).toBe(15_000);
    expect(client.rows.size).toBe(engine.queryRows(ns.db.adapter, everyItemTagged).length);
    // Cheap rows again: each range within a quarter of the budget, the next reads twice as many.
    clock.msPerRow = 0.0001;
    pullWhole([{ op: "del", hash: "t" }]);
    const again = pullWhole([put]);
    expect(again.turns).toBe(0);
    expect(again.sizes.at(-1)).toBe(RANGE_ROWS);
    expect(client.rows.size).toBe(15_000);
  });
});

describe("RangeSizes", () => {
  it("halves a group's query's ranges down to 32 rows, and doubles them back to RANGE_ROWS", () => {
    const ranges = new RangeSizes();
    expect(ranges.of("g", "q")).toBe(RANGE_ROWS);
    const halved: number[] = [];
    while (ranges.halve("g", "q")) halved.push(ranges.of("g", "q"));
    expect(halved).toEqual([1024, 512, 256, 128, 64, 32]);
    // Another query, or the same one of another group (another user's), is not sized by it.
    expect(ranges.of("g", "other")).toBe(RANGE_ROWS);
    expect(ranges.of("h", "q")).toBe(RANGE_ROWS);
    for (let i = 0; i < 6; i++) ranges.double("g", "q");
    expect(ranges.of("g", "q")).toBe(RANGE_ROWS);
    ranges.double("g", "q");
    expect(ranges.of("g", "q")).toBe(RANGE_ROWS);
  });
});
