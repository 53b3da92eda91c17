import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ClientRows } from "../test/chat.js";
import { DATABASES, testEngine } from "../test/databases.js";
import { Namespace } from "../test/fixtures.js";
import type { QueryPatchOp, Schema, Visibility } from "./types.js";

// A query without a limit or EXISTS but with related subqueries is evaluated afresh, on a metered
// pull, in ranges of its root's key as a query of its root alone is (ranges.ts): each range holds
// its root rows and their related rows, a related row of root rows in two ranges held once.
// Writes between ranges have the ranges so far evaluated again when they can affect them.

const schema: Schema = {
  tables: {
    item: { columns: { id: "string", kind: "string", family: "string" }, primaryKey: ["id"] },
    tag: {
      columns: { id: "string", itemId: "string", label: "string", rank: "integer" },
      primaryKey: ["id"],
    },
    family: { columns: { id: "string", name: "string" }, primaryKey: ["id"] },
    note: { columns: { id: "string", tagId: "string", text: "string" }, primaryKey: ["id"] },
  },
};

const ITEMS = 5000;
const FAMILIES = 20;

const equals = (column: string, op: string, value: string) => ({
  type: "simple",
  op,
  left: { type: "column", name: column },
  right: { type: "literal", value },
});

/**
 * The items of kind a, each with its first two tags by rank that are not hidden, and its family
 * (a row shared by items of every range).
 */
const itemsOfA = {
  table: "item",
  orderBy: [["id", "asc"]],
  where: equals("kind", "=", "a"),
  related: [
    {
      correlation: { parentField: ["id"], childField: ["itemId"] },
      subquery: {
        table: "tag",
        orderBy: [["rank", "asc"]],
        limit: 2,
        where: equals("label", "!=", "hidden"),
      },
    },
    { correlation: { parentField: ["family"], childField: ["id"] }, subquery: { table: "family" } },
  ],
};
/** The same items with their tags alone: a one-to-many relation, whose rows no two ranges share. */
const itemsWithTags = { ...itemsOfA, related: itemsOfA.related.slice(0, 1) };
/**
 * The same items with their tags, and below each tag the item it belongs to: a nested relation back
 * to the root's table, whose rows a range may hold as another range's root rows.
 */
const itemsNested = {
  ...itemsOfA,
  related: [
    {
      ...itemsOfA.related[0]!,
      subquery: {
        ...itemsOfA.related[0]!.subquery,
        related: [
          { correlation: { parentField: ["itemId"], childField: ["id"] }, subquery: { table: "item" } },
        ],
      },
    },
    itemsOfA.related[1]!,
  ],
};
/** The same items with their tags, and below each tag its notes: a tree of one-to-many relations. */
const itemsTagsNotes = {
  ...itemsWithTags,
  related: [
    {
      ...itemsOfA.related[0]!,
      subquery: {
        ...itemsOfA.related[0]!.subquery,
        related: [
          { correlation: { parentField: ["id"], childField: ["tagId"] }, subquery: { table: "note" } },
        ],
      },
    },
  ],
};
const putOf = (ast: unknown): QueryPatchOp => ({ op: "put", hash: "items", name: "itemsOfA", args: [], ast });
const put = putOf(itemsOfA);

const itemId = (n: number) => `i${String(n).padStart(5, "0")}`;

/** A write of one row: an item moves between kinds or families, a tag is hidden, moves, ranks, leaves or comes, a family is renamed. */
const write = fc.record({
  op: fc.constantFrom(
    "kind",
    "family",
    "hide",
    "move",
    "rank",
    "untag",
    "tag",
    "rename",
    "delete",
    "insert",
    "note",
    "unnote",
  ),
  row: fc.nat(ITEMS + 50),
  value: fc.nat(ITEMS + 50),
});

async function seeded(open: () => never, ast: unknown = itemsOfA) {
  const engine = await testEngine();
  const ns = new Namespace(engine, open(), schema);
  ns.sql(
    "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < ?) " +
      `INSERT INTO item SELECT printf('i%05d', i), CASE WHEN i % 3 = 0 THEN 'b' ELSE 'a' END, 'f' || (i % ${FAMILIES}) FROM n`,
    [ITEMS],
  );
  ns.sql(
    "INSERT INTO tag SELECT 'x' || id, id, 'x', 1 FROM item UNION ALL SELECT 'y' || id, id, 'y', 0 FROM item " +
      "UNION ALL SELECT 'z' || id, id, 'hidden', -1 FROM item",
    [],
  );
  ns.sql(
    "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < ?) " +
      "INSERT INTO family SELECT 'f' || i, 'family ' || i FROM n",
    [FAMILIES],
  );
  ns.sql("INSERT INTO note SELECT 'n' || id, id, 'about ' || id FROM tag WHERE label = 'x'", []);
  const client = new ClientRows();
  /** The query's rows now (under `visibility`), with their values, as a client keys them. */
  const rowsNow = (visibility?: Visibility) => {
    const rows = new Map<string, unknown>();
    for (const { table, key } of engine.queryRows(ns.db.adapter, ast, { visibility })) {
      const columns = Object.keys(schema.tables[table]!.columns);
      const where = schema.tables[table]!.primaryKey.map((column) => `"${column}" = ?`).join(" AND ");
      const [values] = ns.db.adapter.query(
        `SELECT ${columns.map((c) => `"${c}"`).join(", ")} FROM "${table}" WHERE ${where}`,
        key as never,
      );
      rows.set(
        `${table}/${JSON.stringify(key)}`,
        Object.fromEntries(columns.map((column, i) => [column, values![i]])),
      );
    }
    return rows;
  };
  const apply = (batch: Array<{ op: string; row: number; value: number }>) =>
    ns.mutate("w", "c1", (run) => {
      for (const { op, row, value } of batch) {
        const id = itemId(row);
        const tag = `${"xyz"[value % 3]}${itemId(row)}`;
        if (op === "kind")
          run("UPDATE item SET kind = CASE kind WHEN 'a' THEN 'b' ELSE 'a' END WHERE id = ?", [id]);
        else if (op === "family")
          run("UPDATE item SET family = ? WHERE id = ?", [`f${value % FAMILIES}`, id]);
        else if (op === "hide")
          run("UPDATE tag SET label = CASE label WHEN 'hidden' THEN 'shown' ELSE 'hidden' END WHERE id = ?", [
            tag,
          ]);
        else if (op === "move") run("UPDATE tag SET itemId = ? WHERE id = ?", [itemId(value), tag]);
        else if (op === "rank") run("UPDATE tag SET rank = ? WHERE id = ?", [(value % 7) - 3, tag]);
        else if (op === "untag") run("DELETE FROM tag WHERE id = ?", [tag]);
        else if (op === "tag")
          run("INSERT OR IGNORE INTO tag VALUES (?, ?, 'new', ?)", [`n${value}`, id, value % 5]);
        else if (op === "rename")
          run("UPDATE family SET name = ? WHERE id = ?", [`renamed ${value}`, `f${row % FAMILIES}`]);
        else if (op === "note") run("UPDATE note SET tagId = ? WHERE id = ?", [tag, `nx${itemId(value)}`]);
        else if (op === "unnote") run("DELETE FROM note WHERE id = ?", [`nx${id}`]);
        else if (op === "delete") run("DELETE FROM item WHERE id = ?", [id]);
        else run("INSERT OR IGNORE INTO item VALUES (?, 'a', ?)", [id, `f${value % FAMILIES}`]);
      }
    });
  let patch: QueryPatchOp[] = [putOf(ast)];
  const parts: Array<{
    more: boolean;
    got: string[];
    examined: number;
    work: number;
    puts: number;
    dels: number;
  }> = [];
  /** Pulls with no time (under `visibility`) until an answer is whole, `between` after each part. */
  const pullAll = (between?: () => void, visibility?: Visibility) => {
    parts.length = 0;
    for (let pulls = 0; pulls < 60; pulls++) {
      const result = ns.pull({
        cookie: client.cookie,
        queries: { patch },
        queryBudgetMs: 60_000,
        answerMs: 0,
        ...(visibility ? { visibility } : {}),
      });
      patch = [];
      client.apply(result.json as never, schema);
      const ops = (result.json as { rowsPatch: Array<{ op: string }> }).rowsPatch.map((row) => row.op);
      parts.push({
        more: result.more,
        got: (result.json as { gotQueries: string[] }).gotQueries,
        examined: result.queryRowsExamined,
        work: result.queryWork,
        puts: ops.filter((op) => op === "put").length,
        dels: ops.filter((op) => op === "del").length,
      });
      if (!result.more) return;
      between?.();
    }
    throw new Error("no whole answer in 60 pulls");
  };
  const drop = () => {
    patch = [{ op: "del", hash: "items" }];
    pullAll();
    expect(client.rows.size).toBe(0);
    // Each row was counted once: none is left once the query lets go of its rows.
    expect(ns.db.adapter.query("SELECT count(*) FROM _weir_group_rows", [])).toEqual([[0]]);
  };
  return { ns, client, parts, pullAll, rowsNow, apply, drop };
}

describe.each(DATABASES)("a query with related subqueries read in ranges on $kind", ({ open }) => {
  it("evaluates it a range a pull with no time, each related row held once", async () => {
    const { client, parts, pullAll, rowsNow, drop } = await seeded(open as never);
    pullAll();
    // Three ranges of 2,048, 2,048 and 904 items, then the rows they owe; each range holds its
    // items of kind a, their tags and the families, the query named complete in the last part.
    expect(parts.length).toBeGreaterThanOrEqual(3);
    const ranges = parts.filter((part) => part.examined > 0);
    expect(ranges).toHaveLength(3);
    // Each range's rows: its 1,365 or 1,366 items of kind a (603 in the last), two tags each,
    // and the 20 families the first range holds (those after it hold them already).
    expect(ranges.map((part) => part.examined)).toEqual([1365 * 3 + FAMILIES, 1365 * 3, 603 * 3]);
    expect(parts.slice(0, -1).every((part) => part.more && part.got.length === 0)).toBe(true);
    expect(parts.at(-1)).toMatchObject({ more: false, got: ["items"] });
    expect(client.rows).toEqual(rowsNow());
    drop();
  });

  it("holds each row of a one-to-many relation's ranges once, and brings them up to date", async () => {
    const { client, parts, pullAll, rowsNow, apply, drop } = await seeded(open as never, itemsWithTags);
    let step = 0;
    pullAll(() => {
      if (step++ === 0)
        apply([
          { op: "move", row: 2, value: 4_900 },
          { op: "hide", row: 1, value: 1 },
        ]);
    });
    expect(parts.filter((part) => part.examined > 0).length).toBeGreaterThanOrEqual(3);
    expect(client.rows).toEqual(rowsNow());
    drop();
  });

  it("brings the rows of its ranges so far up to date with writes between them", async () => {
    const { client, pullAll, rowsNow, apply, drop } = await seeded(open as never);
    let step = 0;
    pullAll(() => {
      // After the first range: a tag of a held item is hidden (its next tag takes its place),
      // another moves to an item of the last range, a family held through every range is
      // renamed, a held item is deleted and another moves to kind b, and one of kind b of the
      // first range comes in.
      if (step++ === 0)
        apply([
          { op: "hide", row: 1, value: 1 },
          { op: "move", row: 2, value: 4_900 },
          { op: "rename", row: 3, value: 7 },
          { op: "delete", row: 4, value: 0 },
          { op: "kind", row: 5, value: 0 },
          { op: "kind", row: 6, value: 0 },
          { op: "family", row: 7, value: 3 },
        ]);
    });
    expect(step).toBeGreaterThan(0);
    expect(client.rows).toEqual(rowsNow());
    drop();
  });

  it("keeps a tree of one-to-many relations up to date after writes at the cost of the rows below them", async () => {
    const { client, parts, pullAll, rowsNow, apply, drop } = await seeded(open as never, itemsTagsNotes);
    pullAll();
    const hydration = parts.reduce((sum, part) => sum + part.work, 0);
    // A tag hidden (its item's next tag takes its place) and a note moved to a tag of another item.
    apply([
      { op: "hide", row: 1, value: 1 },
      { op: "note", row: 2, value: 4_000 },
    ]);
    pullAll();
    expect(parts).toHaveLength(1);
    // The item's tags and their notes, and the note, are looked at: not the query's 20,000 rows.
    expect(parts[0]!.work).toBeGreaterThan(0);
    expect(parts[0]!.work).toBeLessThan(50);
    expect(hydration).toBeGreaterThan(10_000);
    expect(client.rows).toEqual(rowsNow());
    drop();
  });

  it("lets a row into its parent's first rows when one of them moves to another parent", async () => {
    const { client, pullAll, rowsNow, apply, drop } = await seeded(open as never, itemsWithTags);
    // A third shown tag of i00001, ranked after its two.
    apply([{ op: "tag", row: 1, value: 2 }]);
    pullAll();
    expect(client.rows.has('tag/["n2"]')).toBe(false);
    // Its tag y moves to i00004: only the tag's state before the write names i00001.
    apply([{ op: "move", row: 1, value: 4 }]);
    pullAll();
    expect(client.rows.has('tag/["n2"]')).toBe(true);
    expect(client.rows).toEqual(rowsNow());
    drop();
  });

  it("lets go of a row its parent's first rows no longer hold when another comes before it", async () => {
    const { client, pullAll, rowsNow, apply, drop } = await seeded(open as never, itemsWithTags);
    pullAll();
    expect(client.rows.has('tag/["xi00001"]')).toBe(true);
    // A tag of rank 0 comes to i00001 before its two (ids break the tie): x, unchanged, is pushed out.
    apply([{ op: "tag", row: 1, value: 0 }]);
    pullAll();
    expect(client.rows.has('tag/["n0"]')).toBe(true);
    expect(client.rows.has('tag/["xi00001"]')).toBe(false);
    expect(client.rows).toEqual(rowsNow());
    drop();
  });

  it("looks at a parent's first rows after a write to one of its many rows, not each of them", async () => {
    const firstFifty = {
      ...itemsWithTags,
      related: [{ ...itemsOfA.related[0]!, subquery: { ...itemsOfA.related[0]!.subquery, limit: 50 } }],
    };
    const { ns, client, parts, pullAll, rowsNow, apply, drop } = await seeded(open as never, firstFifty);
    ns.sql(
      "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < 3000) " +
        "INSERT INTO tag SELECT printf('m%05d', i), 'i00001', 'many', 10 + i FROM n",
      [],
    );
    pullAll();
    // One of its 3,003 tags ranked first: its first 50 and the changed one are weighed, each
    // against its first 50, after one read of the item's tags in order.
    apply([{ op: "rank", row: 1, value: 0 }]);
    pullAll();
    expect(parts).toHaveLength(1);
    expect(parts[0]!.work).toBeGreaterThan(0);
    expect(parts[0]!.work).toBeLessThan(10_000);
    expect(client.rows).toEqual(rowsNow());
    drop();
  });

  it("lets go of a row root rows share once the last one holding it moves away, at the cost of the rows it moved", async () => {
    const { ns, client, parts, pullAll, rowsNow, drop } = await seeded(open as never);
    ns.mutate("w", "c1", (run) => {
      run("INSERT INTO family VALUES ('f99', 'alone')", []);
      run("INSERT INTO item VALUES ('i09999', 'a', 'f99')", []);
    });
    pullAll();
    expect(client.rows.has('family/["f99"]')).toBe(true);
    // Its one item moves to another family: only the item's state before the write names f99.
    ns.mutate("w", "c1", (run) => run("UPDATE item SET family = 'f3' WHERE id = 'i09999'", []));
    pullAll();
    expect(parts).toHaveLength(1);
    // The item, its tags and the two families, each looked up by an index: not the query's rows.
    expect(parts[0]!.work).toBeGreaterThan(0);
    expect(parts[0]!.work).toBeLessThan(50);
    expect(client.rows.has('family/["f99"]')).toBe(false);
    expect(client.rows).toEqual(rowsNow());
    drop();
  });

  it("evaluates a query whole after writes of more rows than it holds", async () => {
    const oneItem = { ...itemsWithTags, where: equals("id", "=", "i00001") };
    const { ns, client, parts, pullAll, rowsNow, drop } = await seeded(open as never, oneItem);
    pullAll();
    // Every tag ranked anew: 15,000 changes, the item's among them.
    ns.mutate("w", "c1", (run) => run("UPDATE tag SET rank = rank + 1", []));
    pullAll();
    expect(parts).toHaveLength(1);
    // The item and its tags are read, not each changed tag.
    expect(parts[0]!.work).toBeGreaterThan(0);
    expect(parts[0]!.work).toBeLessThan(50);
    expect(client.rows).toEqual(rowsNow());
    drop();
  });

  it("reads a query again in ranges after writes of more rows than a step brings up to date", async () => {
    const { ns, client, parts, pullAll, rowsNow, drop } = await seeded(open as never, itemsWithTags);
    pullAll();
    // Every tag ranked anew: 15,000 changes, more than the query's 10,000 rows.
    ns.mutate("w", "c1", (run) => run("UPDATE tag SET rank = rank + 1", []));
    pullAll();
    // It let go of its rows and read them again a range a pull: no one pull took the changes in.
    expect(parts.filter((part) => part.examined > 0).length).toBeGreaterThanOrEqual(3);
    expect(parts.at(-1)).toMatchObject({ more: false, got: ["items"] });
    expect(client.rows).toEqual(rowsNow());
    drop();
  });

  it("starts its ranges over when writes between them change more rows than they hold", async () => {
    const { ns, client, parts, pullAll, rowsNow, drop } = await seeded(open as never, itemsWithTags);
    let step = 0;
    pullAll(() => {
      if (step++ === 0) ns.mutate("w", "c1", (run) => run("UPDATE tag SET rank = rank + 1", []));
    });
    // Its first range, then all three again.
    expect(parts.filter((part) => part.examined > 0).length).toBeGreaterThanOrEqual(4);
    expect(client.rows).toEqual(rowsNow());
    drop();
  });

  // Claims the caller's rows were answered under, and claims that hide its x tags.
  const everything: Visibility = { tag: { sql: "label <> ?", params: ["none"] } };
  const hidingX: Visibility = { tag: { sql: "label <> ?", params: ["x"] } };

  it.each([
    ["with its tags", itemsWithTags, hidingX, 3],
    [
      "a window of 4,000 items",
      { table: "item", orderBy: [["id", "asc"]], limit: 4000 },
      { item: { sql: "kind <> ?", params: ["b"] } },
      2,
    ],
  ] as const)(
    "reads a query again in ranges after the caller's claims change (%s), not whole in one pull",
    async (_, ast, hiding, ranges) => {
      const { client, parts, pullAll, rowsNow, drop } = await seeded(open as never, ast);
      pullAll(undefined, everything);
      expect(client.rows).toEqual(rowsNow(everything));
      const held = client.rows.size;
      pullAll(undefined, hiding);
      // A part a range (or page), each reading its rows, not every row the query held.
      const read = parts.filter((part) => part.examined > 0);
      expect(read.length).toBeGreaterThanOrEqual(ranges);
      expect(Math.max(...read.map((part) => part.examined))).toBeLessThan(held);
      expect(parts.at(-1)).toMatchObject({ more: false });
      expect(parts.at(-1)!.got).toContain("items");
      expect(client.rows).toEqual(rowsNow(hiding));
      drop();
    },
  );

  it("evaluates a query of a few rows again in one pull after a claims change, sending only what they hide", async () => {
    const few = { ...itemsWithTags, where: equals("id", "<", "i00030") };
    const { client, parts, pullAll, rowsNow, drop } = await seeded(open as never, few);
    pullAll(undefined, everything);
    const before = rowsNow(everything);
    const hidden = [...before.keys()].filter((key) => key.startsWith('tag/["x'));
    expect(hidden.length).toBeGreaterThan(0);
    pullAll(undefined, hidingX);
    // Its rows were let go of and held again in the one pull: those still shown are not sent.
    expect(parts).toHaveLength(1);
    expect(parts[0]).toMatchObject({ more: false, puts: 0, dels: hidden.length });
    expect(client.rows).toEqual(rowsNow(hidingX));
    drop();
  });

  it("goes on in ranges to the end on a pull that is not metered", async () => {
    const { ns, client, rowsNow, drop } = await seeded(open as never);
    const first = ns.pull({
      cookie: client.cookie,
      queries: { patch: [put] },
      queryBudgetMs: 60_000,
      answerMs: 0,
    });
    client.apply(first.json as never, schema);
    expect(first.more).toBe(true);
    for (let pulls = 0; pulls < 20; pulls++) {
      const result = ns.pull({ cookie: client.cookie, queries: { patch: [] } });
      client.apply(result.json as never, schema);
      if (!result.more) break;
    }
    expect(client.rows).toEqual(rowsNow());
    drop();
  });
});

const scenario = fc.record({
  batches: fc.array(fc.array(write, { maxLength: 10 }), { minLength: 1, maxLength: 6 }),
});

// A model: random writes after each part while the query is read in ranges, then after each whole
// answer. After every whole answer the client holds the query's rows with their values, and each
// row is held once.
describe.each(DATABASES)(
  "a query with related subqueries read in ranges, against SQLite, on $kind",
  ({ open }) => {
    it.each([
      ["a shared family", itemsOfA],
      ["a nested relation back to the root's table", itemsNested],
      ["one-to-many relations only, kept up to date among the changed rows", itemsWithTags],
      ["a tree of one-to-many relations, kept up to date among the changed rows", itemsTagsNotes],
    ])(
      "holds the query's rows after every whole answer (%s)",
      async (_, ast) => {
        await fc.assert(
          fc.asyncProperty(scenario, async ({ batches }) => {
            const { client, pullAll, rowsNow, apply, drop } = await seeded(open as never, ast);
            let next = 0;
            pullAll(() => {
              if (next < batches.length) apply(batches[next++]!);
            });
            expect(client.rows).toEqual(rowsNow());
            for (; next < batches.length; next++) {
              apply(batches[next]!);
              pullAll();
              expect(client.rows).toEqual(rowsNow());
            }
            drop();
          }),
          { numRuns: 6 },
        );
      },
      120_000,
    );
  },
);
