import { describe, expect, it } from "vitest";
import { ClientRows } from "../test/chat.js";
import { DATABASES, testEngine } from "../test/databases.js";
import { Namespace } from "../test/fixtures.js";
import { itemSchema, ofKind, rowsOfKind } from "../test/items.js";
import type { PullInput, QueryPatchOp } from "./types.js";

const schema = itemSchema;

/** Items i00000 to i04999, kind "a" for even ones and "b" for odd ones. */
const ITEMS = 5000;

const timed = { queryBudgetMs: 60_000 };
const noTime = { queryBudgetMs: 60_000, answerMs: 0 };

// A query whose rows are each held by their own values (no limit, relation or EXISTS) is evaluated
// afresh, on a metered pull, in ranges of its table's key, 2,048 rows of the table a range, each a
// step of the answer's pace: with no time left the query waits, holding its ranges' rows, and the
// next pulls go on where they ended. Writes meanwhile reach the rows its ranges hold; the rows past
// them are read when their range comes.
describe.each(DATABASES)("a query evaluated in ranges of its root's key on $kind", ({ open }) => {
  async function items() {
    const ns = new Namespace(await testEngine(), open(), schema);
    ns.sql(
      "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < ?) " +
        "INSERT INTO item SELECT printf('i%05d', i), char(97 + i % 2), 'note ' || i FROM n",
      [ITEMS],
    );
    const client = new ClientRows();
    const parts: Array<{ more: boolean; got: string[]; rows: number }> = [];
    /** Rows each part's evaluations examined (the meter's count), and held. */
    const work: Array<{ examined: number; held: number }> = [];
    /** Rows the client held after some part that the database then held otherwise, or not as of kind a. */
    const wrong: string[] = [];
    const ofA = () => rowsOfKind(ns, "a");
    const pullAll = (limits: Partial<PullInput>, patch: QueryPatchOp[] = [], between?: () => void) => {
      parts.length = 0;
      work.length = 0;
      for (let pulls = 0; ; pulls++) {
        expect(pulls).toBeLessThan(40);
        const result = ns.pull({ cookie: client.cookie, queries: { patch }, ...limits });
        if (result.json.unchanged) return;
        patch = [];
        client.apply(result.json as never, schema);
        work.push({ examined: result.queryWork, held: result.queryRowsExamined });
        parts.push({
          more: result.more,
          got: (result.json as { gotQueries: string[] }).gotQueries,
          rows: client.rows.size,
        });
        const now = ofA();
        for (const [key, row] of client.rows) {
          if (JSON.stringify(row) !== JSON.stringify(now.get(key))) wrong.push(key);
        }
        if (result.more) between?.();
      }
    };
    return { ns, client, parts, work, wrong, pullAll, ofA };
  }

  it("evaluates a reset's query a range a pull with no time, and the client ends with its rows", async () => {
    const { client, parts, work, wrong, pullAll, ofA } = await items();
    pullAll(noTime, [ofKind("a")]);
    // Three ranges of the table (2,048, 2,048 and 904 rows), one a pull, each holding half its
    // rows; each answer sends a page of the rows so far, and the query is named complete in the
    // last part alone.
    expect(work.slice(0, 3)).toEqual([
      // The first also read the query whole until it found more rows than a range reads (2,049
      // of kind a, in 4,097 rows), to tell it needs ranges.
      { examined: 4097 + 2048, held: 1024 },
      { examined: 2048, held: 1024 },
      { examined: 904, held: 452 },
    ]);
    expect(work.slice(3).every((w) => w.examined === 0)).toBe(true);
    expect(parts.slice(0, -1).every((p) => p.more && p.got.length === 0)).toBe(true);
    expect(parts.at(-1)).toMatchObject({ more: false, got: ["kind-a"] });
    expect(wrong).toEqual([]);
    expect(client.rows).toEqual(ofA());
    expect(client.rows.size).toBe(ITEMS / 2);
  });

  it("evaluates whole, in one step, a query of fewer rows than a range reads", async () => {
    const { ns, client, parts, work, pullAll } = await items();
    const some: QueryPatchOp = {
      op: "put",
      hash: "some",
      name: "some",
      args: [],
      ast: {
        table: "item",
        orderBy: [["id", "asc"]],
        where: {
          type: "simple",
          op: "IN",
          left: { type: "column", name: "id" },
          right: { type: "literal", value: ["i00010", "i04990"] },
        },
      },
    };
    pullAll(noTime, [some]);
    // Two rows found by their keys, not every range of the table read.
    expect(parts).toEqual([{ more: false, got: ["some"], rows: 2 }]);
    expect(work[0]!.examined).toBeLessThan(10);
    expect(client.keys()).toEqual(['item/["i00010"]', 'item/["i04990"]']);
    expect(ns.db.adapter.query("SELECT count(*) FROM _weir_query_ranges", [])).toEqual([[0]]);
  });

  it("evaluates it whole where the pull has the time or is not metered", async () => {
    for (const limits of [timed, {}]) {
      const { client, parts, work, pullAll, ofA } = await items();
      pullAll(limits, [ofKind("a")]);
      expect(parts).toEqual([{ more: false, got: ["kind-a"], rows: ITEMS / 2 }]);
      expect(work[0]!.held).toBe(ITEMS / 2);
      expect(client.rows).toEqual(ofA());
    }
  });

  it("brings the rows its ranges hold up to date with writes between them, and reads the others as they are", async () => {
    const { ns, client, parts, wrong, pullAll, ofA } = await items();
    let writes = 0;
    pullAll(noTime, [ofKind("a")], () => {
      writes++;
      // Before the first range's end (i02047) and past it: a held row changes, one leaves the
      // query, one enters it; past it, one enters and one leaves before its range comes.
      const near = String(writes * 10).padStart(3, "0");
      ns.mutate("g", "c1", (sql) => {
        sql("UPDATE item SET note = ? WHERE id = ?", [`changed ${writes}`, `i00${near}`]);
        sql("UPDATE item SET kind = 'b' WHERE id = ?", [`i01${near}`]);
        sql("UPDATE item SET kind = 'a' WHERE id = ?", [`i01${String(writes * 10 + 1).padStart(3, "0")}`]);
        sql("UPDATE item SET kind = 'a' WHERE id = ?", [`i04${String(writes * 10 + 1).padStart(3, "0")}`]);
        sql("UPDATE item SET kind = 'b' WHERE id = ?", [`i03${near}`]);
      });
    });
    expect(writes).toBeGreaterThanOrEqual(2);
    expect(parts.at(-1)).toMatchObject({ more: false, got: ["kind-a"] });
    expect(wrong).toEqual([]);
    expect(client.rows).toEqual(ofA());
    expect(client.rows.get('item/["i00010"]')).toMatchObject({ note: "changed 1" });
    expect(client.rows.has('item/["i01010"]')).toBe(false);
    expect(client.rows.has('item/["i04011"]')).toBe(true);
  });

  it("evaluates a query a patch puts in ranges too, and deletes its rows if the patch after deletes it", async () => {
    const { ns, client, parts, wrong, pullAll, ofA } = await items();
    pullAll(timed, [ofKind("c")]);
    expect(client.rows.size).toBe(0);
    const first = ns.pull({ cookie: client.cookie, queries: { patch: [ofKind("a")] }, ...noTime });
    client.apply(first.json as never, schema);
    expect(first.more).toBe(true);
    expect(client.rows.size).toBeGreaterThan(0);
    expect(client.rows.size).toBeLessThan(ITEMS / 2);
    // Deleted while its ranges are under way: it lets go of their rows, and nothing waits.
    pullAll(noTime, [{ op: "del", hash: "kind-a" }]);
    expect(client.rows.size).toBe(0);
    expect(ns.db.adapter.query("SELECT count(*) FROM _weir_query_ranges", [])).toEqual([[0]]);
    expect(ns.db.adapter.query("SELECT count(*) FROM _weir_deferred_queries", [])).toEqual([[0]]);
    pullAll(noTime, [ofKind("a")]);
    expect(parts.at(-1)).toMatchObject({ more: false, got: ["kind-a", "kind-c"] });
    expect(wrong).toEqual([]);
    expect(client.rows).toEqual(ofA());
  });

  it("brings such queries up to date with writes past the answer's time, among the changed rows alone", async () => {
    const { ns, client, parts, pullAll } = await items();
    pullAll(timed, [ofKind("a"), ofKind("b")]);
    ns.mutate("g", "c1", (sql) => {
      sql("UPDATE item SET note = 'changed' WHERE id IN ('i00000', 'i00001', 'i04998', 'i04999')");
      sql("UPDATE item SET kind = 'a' WHERE id = 'i00003'");
    });
    // Their cost is the changed rows, which the answer reads anyway: none waits for a later part.
    pullAll(noTime);
    expect(parts).toEqual([{ more: false, got: ["kind-a", "kind-b"], rows: ITEMS }]);
    const rows = ns.db.adapter.query("SELECT id, kind, note FROM item", []);
    expect(client.rows).toEqual(
      new Map(rows.map(([id, kind, note]) => [`item/${JSON.stringify([id])}`, { id, kind, note }])),
    );
  });

  it("goes on in ranges to the end on a pull that is not metered, counting each row once", async () => {
    const { ns, client, parts, pullAll, ofA } = await items();
    const first = ns.pull({ cookie: client.cookie, queries: { patch: [ofKind("a")] }, ...noTime });
    client.apply(first.json as never, schema);
    expect(first.more).toBe(true);
    pullAll({});
    expect(parts.at(-1)).toMatchObject({ more: false, got: ["kind-a"] });
    expect(client.rows).toEqual(ofA());
    // Each row is held once: deleting the query lets go of every one.
    pullAll({}, [{ op: "del", hash: "kind-a" }]);
    expect(client.rows.size).toBe(0);
    expect(ns.db.adapter.query("SELECT count(*) FROM _weir_group_rows", [])).toEqual([[0]]);
  });

  it("counts the rows of its earlier ranges toward the pull's rows budget", async () => {
    const { ns, client } = await items();
    const limits = { ...noTime, maxQueryRows: 2000 };
    let refused: unknown = null;
    let patch = [ofKind("a")];
    for (let pulls = 0; pulls < 10 && refused === null; pulls++) {
      try {
        const result = ns.pull({ cookie: client.cookie, queries: { patch }, ...limits });
        patch = [];
        client.apply(result.json as never, schema);
      } catch (error) {
        refused = error;
      }
    }
    // Each range holds 1,024 rows: the second passes 2,000 with the first's.
    expect(refused).toMatchObject({ code: "query_budget_exceeded" });
    // The query stays, and refuses every pull that reaches its turn, but not one that deletes it.
    expect(() => ns.pull({ cookie: client.cookie, queries: { patch: [] }, ...limits })).toThrow(
      expect.objectContaining({ code: "query_budget_exceeded" }),
    );
    let ops: QueryPatchOp[] = [{ op: "del", hash: "kind-a" }];
    for (let pulls = 0; pulls < 10; pulls++) {
      const result = ns.pull({ cookie: client.cookie, queries: { patch: ops }, ...limits });
      ops = [];
      if (result.json.unchanged) break;
      client.apply(result.json as never, schema);
    }
    expect(client.rows.size).toBe(0);
    expect(ns.db.adapter.query("SELECT count(*) FROM _weir_query_ranges", [])).toEqual([[0]]);
  });

  it("counts the time of its earlier ranges toward the query's work budget", async () => {
    const { ns, client } = await items();
    const spent = () => ns.db.adapter.query("SELECT spent FROM _weir_query_ranges", [])[0]?.[0] as number;
    let patch = [ofKind("a")];
    const pull = () => {
      client.apply(ns.pull({ cookie: client.cookie, queries: { patch }, ...noTime }).json as never, schema);
      patch = [];
    };
    pull();
    const first = spent();
    pull();
    expect(first).toBeGreaterThan(0);
    expect(spent()).toBeGreaterThan(first);
  });
});
