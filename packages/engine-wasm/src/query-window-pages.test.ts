import { describe, expect, it } from "vitest";
import { ClientRows } from "../test/chat.js";
import { DATABASES, testEngine } from "../test/databases.js";
import { Namespace } from "../test/fixtures.js";
import {
  itemsNow,
  type Order,
  rankedItemSchema,
  windowNow as windowNowOf,
  windowOfA,
} from "../test/ranked-items.js";
import type { PullInput, QueryPatchOp } from "./types.js";

/** Items with a rank that ties often, is NULL in one of seven and a fraction in some. */
const schema = rankedItemSchema;

/** Items i00000 to i09999, kind "a" for even ones and "b" for odd ones: 5,000 of kind a. */
const ITEMS = 10_000;
/** More rows than two pages read (2,048 each), fewer than the window's kind holds. */
const LIMIT = 4500;

const timed = { queryBudgetMs: 60_000 };
const noTime = { queryBudgetMs: 60_000, answerMs: 0 };

/** The first LIMIT items of kind a in `order`. */
const windowOf = (order: Order, hash = "window"): QueryPatchOp => windowOfA(order, LIMIT, hash);

const ORDERS: Array<{ name: string; order: Order; sql: string }> = [
  { name: "a nullable rank ascending", order: [["rank", "asc"]], sql: "rank ASC, id ASC" },
  { name: "a nullable rank descending", order: [["rank", "desc"]], sql: "rank DESC, id ASC" },
  { name: "the key descending", order: [["id", "desc"]], sql: "id DESC" },
];

// A window of more rows than a range reads (a root with a limit, no relation or EXISTS) is
// evaluated afresh, on a metered pull, a page of its order at a time, each page a step of the
// answer's pace: with no time left it waits, holding its pages' rows, and the next pull reads on
// after the last row they read (its bound). Writes meanwhile reach the rows up to the bound.
describe.each(DATABASES)("a window read in pages of its order on $kind", ({ open }) => {
  async function items() {
    const ns = new Namespace(await testEngine(), open(), schema);
    ns.sql(
      "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < ?) " +
        "INSERT INTO item SELECT printf('i%05d', i), char(97 + i % 2), " +
        "CASE WHEN i % 7 = 0 THEN NULL WHEN i % 5 = 0 THEN (i * 37) % 400 + 0.5 ELSE (i * 37) % 400 END, " +
        "'note ' || i FROM n",
      [ITEMS],
    );
    const client = new ClientRows();
    const parts: Array<{ more: boolean; got: string[]; rows: number; held: number }> = [];
    /**
     * Rows the client held after some part with other values than the database's then, or not of
     * kind a, and not owed to it (the rows a write changes are owed; a later part sends them).
     */
    const wrong: string[] = [];
    const now = () => itemsNow(ns);
    const windowNow = (sql: string) => windowNowOf(ns, sql, LIMIT);
    const pullAll = (limits: Partial<PullInput>, patch: QueryPatchOp[] = [], between?: () => void) => {
      parts.length = 0;
      for (let pulls = 0; ; pulls++) {
        expect(pulls).toBeLessThan(40);
        const result = ns.pull({ cookie: client.cookie, queries: { patch }, ...limits });
        if (result.json.unchanged) return;
        patch = [];
        client.apply(result.json as never, schema);
        parts.push({
          more: result.more,
          got: (result.json as { gotQueries: string[] }).gotQueries,
          rows: client.rows.size,
          held: result.queryRowsExamined,
        });
        const rows = now();
        const owed = new Set(
          ns.db.adapter.query("SELECT pk FROM _weir_query_pending", []).map(([pk]) => `item/${pk}`),
        );
        for (const [key, row] of client.rows) {
          const held = rows.get(key) as { kind: string } | undefined;
          if ((JSON.stringify(row) !== JSON.stringify(held) || held?.kind !== "a") && !owed.has(key))
            wrong.push(key);
        }
        if (result.more) between?.();
      }
    };
    return { ns, client, parts, wrong, pullAll, windowNow };
  }

  it.each(ORDERS)("reads a window in $name a page a pull with no time", async ({ order, sql }) => {
    const { ns, client, parts, wrong, pullAll, windowNow } = await items();
    pullAll(noTime, [windowOf(order)]);
    // Three pages: 2,048 rows twice, then the 404 left of the window. Each answer sends a page of
    // the rows so far, and the window is named complete in the last alone.
    expect(parts.map((p) => p.held).filter((held) => held > 0)).toEqual([2048, 2048, 404]);
    expect(parts.slice(0, -1).every((p) => p.more && p.got.length === 0)).toBe(true);
    expect(parts.at(-1)).toMatchObject({ more: false, got: ["window"] });
    expect(wrong).toEqual([]);
    expect(client.rows).toEqual(windowNow(sql));
    // Its bound stays, at its last row: writes bring it up to date from there.
    const columns = order.map(([column]) => column);
    if (!columns.includes("id")) columns.push("id");
    const last = ns.db.adapter.query(
      `SELECT ${columns.join(", ")} FROM item WHERE kind = 'a' ORDER BY ${sql} LIMIT 1 OFFSET ${LIMIT - 1}`,
      [],
    )[0]!;
    expect(
      ns.db.adapter.query("SELECT value FROM _weir_query_bounds ORDER BY i", []).map(([v]) => v),
    ).toEqual(last);
  });

  it.each([
    { name: "a NULL", ranks: "UPDATE item SET rank = NULL WHERE kind = 'a' AND id < 'i04200'", type: "null" },
    {
      name: "a REAL a JSON text would round",
      ranks: "UPDATE item SET rank = CAST(substr(id, 2) AS INTEGER) / 3.0",
      type: "real",
    },
  ])("keeps a bound of $name as SQLite holds it, and goes on after it", async ({ ranks, type }) => {
    const { ns, client, wrong, pullAll, windowNow } = await items();
    ns.sql(ranks);
    const first = ns.pull({
      cookie: client.cookie,
      queries: { patch: [windowOf([["rank", "asc"]])] },
      ...noTime,
    });
    client.apply(first.json as never, schema);
    expect(first.more).toBe(true);
    // The first page's last row, as the table holds it.
    const [rank, id] = ns.db.adapter.query(
      "SELECT rank, id FROM item WHERE kind = 'a' ORDER BY rank ASC, id ASC LIMIT 1 OFFSET 2047",
      [],
    )[0]!;
    expect(
      ns.db.adapter.query("SELECT i, typeof(value), value FROM _weir_query_bounds ORDER BY i", []),
    ).toEqual([
      [0, type, rank],
      [1, "text", id],
    ]);
    pullAll(noTime);
    expect(wrong).toEqual([]);
    expect(client.rows).toEqual(windowNow("rank ASC, id ASC"));
    // No row was read twice: deleting the window lets go of every one.
    pullAll(timed, [{ op: "del", hash: "window" }]);
    expect(ns.db.adapter.query("SELECT count(*) FROM _weir_group_rows", [])).toEqual([[0]]);
  });

  it("evaluates it whole where the pull has the time or is not metered", async () => {
    for (const limits of [timed, {}]) {
      const { client, parts, pullAll, windowNow } = await items();
      pullAll(limits, [windowOf(ORDERS[0]!.order)]);
      expect(parts).toEqual([{ more: false, got: ["window"], rows: LIMIT, held: LIMIT }]);
      expect(client.rows).toEqual(windowNow(ORDERS[0]!.sql));
    }
  });

  it.each(ORDERS)(
    "brings the rows of its pages in $name up to date with writes between them",
    async ({ order, sql }) => {
      const { ns, client, parts, wrong, pullAll, windowNow } = await items();
      let writes = 0;
      // Writes while its pages are under way alone: once the window is read, a write has it
      // evaluated whole, which would hide what its pages got wrong.
      const paging = () =>
        (ns.db.adapter.query("SELECT count(*) FROM _weir_query_ranges", [])[0]![0] as number) > 0;
      pullAll(noTime, [windowOf(order)], () => {
        if (!paging()) return;
        writes++;
        ns.mutate("g", "c1", (run) => {
          // Held rows change, leave the kind, move to either end of the order or to NULL; rows
          // outside it enter at either end; a row is deleted.
          const held = [...client.rows.keys()].map((key) => JSON.parse(key.slice(5))[0] as string).sort();
          run("UPDATE item SET note = 'changed' WHERE id = ?", [held[10]!]);
          run("UPDATE item SET kind = 'b' WHERE id = ?", [held[20]!]);
          run("UPDATE item SET rank = 100000 WHERE id = ?", [held[30]!]);
          run("UPDATE item SET rank = -1 WHERE id = ?", [held[40]!]);
          run("UPDATE item SET rank = NULL WHERE id = ?", [held[50]!]);
          run("DELETE FROM item WHERE id = ?", [held[60]!]);
          run("UPDATE item SET kind = 'a', rank = -2 WHERE id = ?", [`i0${1001 + writes * 2}`]);
          run("UPDATE item SET kind = 'a', rank = 100001 WHERE id = ?", [`i0${3001 + writes * 2}`]);
          run("UPDATE item SET kind = 'a', rank = NULL WHERE id = ?", [`i0${5001 + writes * 2}`]);
        });
      });
      expect(writes).toBeGreaterThanOrEqual(1);
      expect(parts.at(-1)).toMatchObject({ more: false, got: ["window"] });
      expect(wrong).toEqual([]);
      expect(client.rows).toEqual(windowNow(sql));
      // Each row is held once: deleting the window lets go of every one.
      pullAll(timed, [{ op: "del", hash: "window" }]);
      expect(client.rows.size).toBe(0);
      expect(ns.db.adapter.query("SELECT count(*) FROM _weir_group_rows", [])).toEqual([[0]]);
    },
  );

  it("evaluates it whole, once, when writes put more rows before its bound than the window holds", async () => {
    const { ns, client, parts, wrong, pullAll, windowNow } = await items();
    let writes = 0;
    pullAll(noTime, [windowOf([["rank", "asc"]])], () => {
      if (writes++ > 0) return;
      // 2,600 rows of kind b enter the window's front: its first page's rows and these are more than
      // its limit.
      ns.mutate("g", "c1", (run) =>
        run(
          "UPDATE item SET kind = 'a', rank = -5 WHERE id IN (SELECT id FROM item WHERE kind = 'b' ORDER BY id LIMIT 2600)",
        ),
      );
    });
    // Its first page; then the 2,600 rows the write changed, which its catch-up found before its
    // bound, and the whole window once.
    expect(parts.map((p) => p.held).filter((held) => held > 0)).toEqual([2048, 2600 + LIMIT]);
    expect(wrong).toEqual([]);
    expect(client.rows).toEqual(windowNow("rank ASC, id ASC"));
  });

  it("goes on in pages to the end on a pull that is not metered, counting each row once", async () => {
    const { ns, client, parts, pullAll, windowNow } = await items();
    const first = ns.pull({
      cookie: client.cookie,
      queries: { patch: [windowOf(ORDERS[1]!.order)] },
      ...noTime,
    });
    client.apply(first.json as never, schema);
    expect(first.more).toBe(true);
    pullAll({});
    expect(parts.at(-1)).toMatchObject({ more: false, got: ["window"] });
    expect(client.rows).toEqual(windowNow(ORDERS[1]!.sql));
    pullAll({}, [{ op: "del", hash: "window" }]);
    expect(client.rows.size).toBe(0);
    expect(ns.db.adapter.query("SELECT count(*) FROM _weir_group_rows", [])).toEqual([[0]]);
  });

  it("counts the rows of its earlier pages toward the pull's rows budget", async () => {
    const { ns, client } = await items();
    // Each page alone is within it (2,048 rows); two are not.
    const limits = { ...noTime, maxQueryRows: 2100 };
    const first = ns.pull({
      cookie: client.cookie,
      queries: { patch: [windowOf(ORDERS[0]!.order)] },
      ...limits,
    });
    client.apply(first.json as never, schema);
    expect(first.more).toBe(true);
    expect(() => ns.pull({ cookie: client.cookie, queries: { patch: [] }, ...limits })).toThrow(
      expect.objectContaining({ code: "query_budget_exceeded" }),
    );
  });

  it("lets go of its pages' rows when a patch deletes it midway, leaving nothing waiting", async () => {
    const { ns, client, parts, pullAll, windowNow } = await items();
    const first = ns.pull({
      cookie: client.cookie,
      queries: { patch: [windowOf(ORDERS[0]!.order)] },
      ...noTime,
    });
    client.apply(first.json as never, schema);
    expect(client.rows.size).toBeGreaterThan(0);
    pullAll(noTime, [{ op: "del", hash: "window" }]);
    expect(client.rows.size).toBe(0);
    for (const table of ["_weir_query_ranges", "_weir_query_bounds", "_weir_deferred_queries"])
      expect(ns.db.adapter.query(`SELECT count(*) FROM ${table}`, [])).toEqual([[0]]);
    pullAll(noTime, [windowOf(ORDERS[2]!.order, "again")]);
    expect(parts.at(-1)).toMatchObject({ more: false, got: ["again"] });
    expect(client.rows).toEqual(windowNow(ORDERS[2]!.sql));
  });
});

// Once read, a window of more than 2,048 rows is brought up to date after writes among the changed
// rows alone, from its bound, however late the answer: it lets go of rows past its limit, reads on
// after its bound when it holds fewer, and holds every row that passes once they are fewer than
// its limit.
describe.each(DATABASES)("a window kept up to date from its bound on $kind", ({ open }) => {
  const ASC: Order = [["rank", "asc"]];
  const SQL = "rank ASC, id ASC";

  async function kept(limits: Partial<PullInput> = timed) {
    const ns = new Namespace(await testEngine(), open(), schema);
    ns.sql(
      "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < ?) " +
        "INSERT INTO item SELECT printf('i%05d', i), char(97 + i % 2), (i * 37) % 400, 'note ' || i FROM n",
      [ITEMS],
    );
    const client = new ClientRows();
    const windowNow = () => windowNowOf(ns, SQL, LIMIT);
    /** One pull with no time: it must answer whole. Answers the rows its evaluations held. */
    const pull = (group = "g", rows = client) => {
      const result = ns.pull({
        clientGroupID: group,
        cookie: rows.cookie,
        queries: { patch: [] },
        ...noTime,
      });
      rows.apply(result.json as never, schema);
      expect(result.more).toBe(false);
      return result.queryRowsExamined;
    };
    /** Pulls until the answer is whole (a write of many rows is sent in parts). */
    const pullAll = () => {
      for (let pulls = 0; pulls < 40; pulls++) {
        const result = ns.pull({ cookie: client.cookie, queries: { patch: [] }, ...noTime });
        client.apply(result.json as never, schema);
        if (!result.more) return;
      }
      throw new Error("no whole answer in 40 pulls");
    };
    const first = ns.pull({ cookie: null, queries: { patch: [windowOf(ASC)] }, ...limits });
    client.apply(first.json as never, schema);
    expect(client.rows).toEqual(windowNow());
    const write = (sql: string) => ns.mutate("g", "c1", (run) => run(sql));
    return { ns, client, windowNow, pull, pullAll, write };
  }

  it("brings it up to date after writes among the changed rows, in one answer with no time", async () => {
    const { ns, client, windowNow, pull, write } = await kept();
    const steps = [
      // Rows enter before its bound: it lets go of as many last ones.
      "UPDATE item SET kind = 'a', rank = -1 WHERE id IN ('i00001', 'i00003', 'i00005')",
      // Held rows leave: it reads on after its bound.
      "DELETE FROM item WHERE id IN (SELECT id FROM item WHERE kind = 'a' AND rank = 0 ORDER BY id LIMIT 5)",
      "UPDATE item SET kind = 'b' WHERE id IN (SELECT id FROM item WHERE kind = 'a' AND rank = 5 ORDER BY id LIMIT 4)",
      // Held rows move past its bound, and rows past it move before it.
      "UPDATE item SET rank = 1000 WHERE id IN (SELECT id FROM item WHERE kind = 'a' AND rank = 10 ORDER BY id LIMIT 3)",
      "UPDATE item SET rank = 2 WHERE id IN (SELECT id FROM item WHERE kind = 'a' AND rank = 398 ORDER BY id LIMIT 3)",
      // A held row changes in place, and one past its bound does.
      "UPDATE item SET note = 'changed' WHERE id IN ('i00002', 'i09998')",
    ];
    for (const step of steps) {
      write(step);
      // The changed rows and those it let go of or read on: not the window's 4,500.
      expect(pull()).toBeLessThan(50);
      expect(client.rows).toEqual(windowNow());
    }
    expect(client.rows.get('item/["i00002"]')).toMatchObject({ note: "changed" });
    // Each row is held once: deleting the window lets go of every one.
    ns.pull({ cookie: client.cookie, queries: { patch: [{ op: "del", hash: "window" }] }, ...timed });
    expect(ns.db.adapter.query("SELECT count(*) FROM _weir_group_rows", [])).toEqual([[0]]);
    expect(ns.db.adapter.query("SELECT count(*) FROM _weir_query_bounds", [])).toEqual([[0]]);
  });

  it("holds every row that passes once they are fewer than its limit, and keeps a bound again past it", async () => {
    const { ns, client, windowNow, pull, pullAll, write } = await kept();
    // 1,000 of kind a leave: 4,000 are left, all of them held.
    write(
      "UPDATE item SET kind = 'b' WHERE id IN (SELECT id FROM item WHERE kind = 'a' ORDER BY id LIMIT 1000)",
    );
    pullAll();
    expect(client.rows).toEqual(windowNow());
    expect(client.rows.size).toBe(4000);
    expect(ns.db.adapter.query("SELECT i FROM _weir_query_bounds", [])).toEqual([[-1]]);
    // Rows come and go with none past a bound to read.
    write("UPDATE item SET kind = 'a', rank = 999 WHERE id IN ('i00001', 'i00003')");
    write("DELETE FROM item WHERE id = 'i09998'");
    expect(pull()).toBeLessThan(50);
    expect(client.rows).toEqual(windowNow());
    // 600 enter: it holds its limit again, up to a bound.
    write(
      "UPDATE item SET kind = 'a' WHERE id IN (SELECT id FROM item WHERE kind = 'b' ORDER BY id DESC LIMIT 600)",
    );
    pullAll();
    expect(client.rows).toEqual(windowNow());
    expect(client.rows.size).toBe(LIMIT);
    expect(ns.db.adapter.query("SELECT count(*) FROM _weir_query_bounds WHERE i >= 0", [])).toEqual([[2]]);
    write("DELETE FROM item WHERE id IN (SELECT id FROM item WHERE kind = 'a' ORDER BY rank, id LIMIT 3)");
    expect(pull()).toBeLessThan(50);
    expect(client.rows).toEqual(windowNow());
  });

  it("lets go of its last values and then its last NULLs when rows enter before its bound", async () => {
    const { ns, client, windowNow, pullAll, write } = await kept();
    // 4,490 of kind a hold no rank: the window is those NULLs (first, ascending) and the 10 least
    // ranks, its bound the 10th.
    write(
      "UPDATE item SET rank = NULL WHERE kind = 'a' AND id NOT IN (SELECT id FROM item WHERE kind = 'a' ORDER BY id DESC LIMIT 510)",
    );
    pullAll();
    expect(client.rows).toEqual(windowNow());
    expect(ns.db.adapter.query("SELECT typeof(value) FROM _weir_query_bounds WHERE i = 0", [])).toEqual([
      ["real"],
    ]);
    // 20 NULLs enter before it: it lets go of its 10 values, then of its 10 last NULLs.
    write(
      "UPDATE item SET kind = 'a', rank = NULL WHERE id IN (SELECT id FROM item WHERE kind = 'b' ORDER BY id LIMIT 20)",
    );
    pullAll();
    expect(client.rows).toEqual(windowNow());
    expect(ns.db.adapter.query("SELECT typeof(value) FROM _weir_query_bounds WHERE i = 0", [])).toEqual([
      ["null"],
    ]);
    // 5 of them go: it reads on after its NULL bound, through the NULLs to the values.
    write(
      "DELETE FROM item WHERE id IN (SELECT id FROM item WHERE kind = 'a' AND rank IS NULL ORDER BY id LIMIT 5)",
    );
    pullAll();
    expect(client.rows).toEqual(windowNow());
    ns.pull({ cookie: client.cookie, queries: { patch: [{ op: "del", hash: "window" }] }, ...timed });
    expect(ns.db.adapter.query("SELECT count(*) FROM _weir_group_rows", [])).toEqual([[0]]);
  });

  it("keeps a bound from a whole evaluation too (a pull that is not metered)", async () => {
    const { client, windowNow, pull, write } = await kept({});
    write("UPDATE item SET kind = 'a', rank = -1 WHERE id = 'i00001'");
    expect(pull()).toBeLessThan(50);
    expect(client.rows).toEqual(windowNow());
  });

  it("gives a follower the leader's bound with its rows", async () => {
    const { ns, client, windowNow, pull, write } = await kept();
    const other = new ClientRows();
    other.apply(
      ns.pull({ clientGroupID: "g2", cookie: null, queries: { patch: [windowOf(ASC)] }, ...timed })
        .json as never,
      schema,
    );
    expect(other.cookie).toBe(client.cookie);
    // Rows enter before the bound: the leader lets go of its last ones, and its bound moves back.
    write(
      "UPDATE item SET kind = 'a', rank = -1 WHERE id IN (SELECT id FROM item WHERE kind = 'b' ORDER BY id LIMIT 20)",
    );
    const leader = ns.pull({ cookie: client.cookie, queries: { patch: [] }, followers: ["g2"], ...noTime });
    client.apply(leader.json as never, schema);
    expect(leader.followed?.map((f) => f.clientGroupID)).toEqual(["g2"]);
    other.apply(JSON.parse(leader.followed![0]!.body), schema);
    expect(other.rows).toEqual(windowNow());
    // The follower's own pull reads on after the leader's bound, not its own of before.
    write("DELETE FROM item WHERE rank = -1");
    pull("g2", other);
    expect(other.rows).toEqual(windowNow());
  });
});
