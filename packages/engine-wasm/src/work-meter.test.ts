import { describe, expect, it } from "vitest";
import { DATABASES } from "../test/databases.js";
import { QueryPages } from "./query-pages.js";
import { WorkMeter } from "./work-meter.js";

// The meter's count of a query's time, on a clock the test moves: the engine passes the ms a query
// read in ranges spent in its earlier ranges (`_weir_query(hash, name, spent)`), and a paging
// pull keeps each query's time across its runs; a range's time counts once either way.
describe.each(DATABASES)("the work meter's count of a query's time on $kind", ({ open }) => {
  function metered(paging: boolean, budgetMs = 60_000, totalMs = budgetMs) {
    let now = 1_000;
    const meter = new WorkMeter(() => now);
    const db = open();
    expect(meter.attach(db.adapter)).toBe(true);
    const pages = paging ? new QueryPages({ pageMs: 60_000, pageRows: 100 }) : null;
    meter.begin(budgetMs, pages, budgetMs, totalMs);
    const query = (spent: number) => db.adapter.query("SELECT _weir_query(?, ?, ?)", ["h", "q", spent]);
    const spent = () => db.adapter.query("SELECT _weir_query_spent()", [])[0]![0] as number;
    return { meter, pages, query, spent, pass: (ms: number) => (now += ms), db };
  }

  it.each([
    ["a pull that pages", true],
    ["a pull that does not", false],
  ])("counts each of a query's ranges in one pull once (%s)", (_, paging) => {
    const { query, spent, pass, db } = metered(paging);
    // Three ranges of 10 ms each, each evaluated after the engine read back the time so far.
    let total = 0;
    for (let range = 0; range < 3; range++) {
      query(total);
      pass(10);
      total = spent();
      // 2 ms between ranges, outside any evaluation (adding the range's rows).
      pass(2);
    }
    // The pages' count includes the time between the ranges, the engine's does not.
    expect(total).toBe(paging ? 34 : 30);
    db.close();
  });

  it("counts a query's earlier runs of a paging pull, and its ranges in earlier pulls", () => {
    const { meter, pages, query, spent, pass, db } = metered(true);
    // A first run of the pull evaluates a query whose earlier pulls' ranges spent 40 ms, for 5 ms,
    // and is stopped between pages: its time is kept for the run after.
    query(40);
    pass(5);
    meter.end();
    meter.begin(60_000, pages);
    // The run after starts over from the engine's stored 40 ms (the first run rolled back).
    query(40);
    pass(5);
    expect(spent()).toBe(50);
    db.close();
  });

  it("holds a query's step to the step budget and its ranges together to the total", () => {
    // 1,024 rows examined: the meter reads its clock once.
    const examine = (db: ReturnType<typeof metered>["db"]) =>
      db.adapter.query(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1024) " +
          "SELECT count(*) FROM n WHERE _weir_work(i)",
        [],
      );
    // A range of 20 ms after ranges of 70: within the step's 50 ms and the total's 100.
    const within = metered(false, 50, 100);
    within.query(70);
    within.pass(20);
    expect(examine(within.db)).toEqual([[1024]]);
    within.db.close();
    // A range of 20 ms after ranges of 90: past the total.
    const total = metered(false, 50, 100);
    total.query(90);
    total.pass(20);
    expect(() => examine(total.db)).toThrow();
    expect(total.meter.message()).toMatch(
      /^query q \(h\) passed its total work budget of 100 ms over the ranges/,
    );
    total.db.close();
    // A range of 60 ms: past the step's budget, whatever the total.
    const step = metered(false, 50, 60_000);
    step.query(0);
    step.pass(60);
    expect(() => examine(step.db)).toThrow();
    expect(step.meter.message()).toMatch(
      /^query q \(h\) passed its work budget of 50 ms \(1024 rows examined\)/,
    );
    step.db.close();
  });

  it("reads a range past its step's budget again half as large, down to 32 rows, then refuses its query", () => {
    const examine = (db: ReturnType<typeof metered>["db"]) =>
      db.adapter.query(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1024) " +
          "SELECT count(*) FROM n WHERE _weir_work(i)",
        [],
      );
    const { meter, pages, query, pass, db } = metered(true, 50, 60_000);
    const rangeRows = () => db.adapter.query("SELECT _weir_range_rows(?, ?)", ["g", "h"])[0]![0];
    const sizes: unknown[] = [];
    for (let run = 0; run < 7; run++) {
      meter.begin(50, pages);
      sizes.push(rangeRows());
      query(0);
      pass(60);
      expect(() => examine(db)).toThrow();
      // Stopped for a turn (the range read again smaller in the run after), not refused.
      if (run < 6) expect([meter.turned(), meter.exceeded]).toEqual([true, null]);
      meter.end();
    }
    expect(sizes).toEqual([2048, 1024, 512, 256, 128, 64, 32]);
    // At 32 rows the range's query is refused past its budget.
    expect(meter.turned()).toBe(false);
    expect(meter.message()).toMatch(/^query q \(h\) passed its work budget of 50 ms/);
    // A range within a quarter of the budget lets the next read twice as many; an evaluation the
    // engine did not ask the range rows of (a whole one) is not a range.
    meter.begin(50, pages);
    rangeRows();
    query(0);
    pass(10);
    query(0);
    expect(pages!.ranges.of("g", "h")).toBe(64);
    pass(10);
    meter.end();
    expect(pages!.ranges.of("g", "h")).toBe(64);
    db.close();
  });
});
