import { describe, expect, it } from "vitest";
import { DATABASES } from "../test/databases.js";
import { QueryPages } from "./query-pages.js";
import { WorkMeter } from "./work-meter.js";

// The meter's count of a query's time, on a clock the test moves: the engine passes the ms a query
// read in ranges spent in its earlier ranges (`_weir_query(hash, name, spent)`), and a paging
// pull keeps each query's time across its runs; a range's time counts once either way.
describe.each(DATABASES)("the work meter's count of a query's time on $kind", ({ open }) => {
  function metered(paging: boolean) {
    let now = 1_000;
    const meter = new WorkMeter(() => now);
    const db = open();
    expect(meter.attach(db.adapter)).toBe(true);
    const pages = paging ? new QueryPages({ pageMs: 60_000, pageRows: 100 }) : null;
    meter.begin(60_000, pages);
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
});
