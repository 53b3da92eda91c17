import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ClientRows } from "../test/chat.js";
import { DATABASES, testEngine } from "../test/databases.js";
import { Namespace } from "../test/fixtures.js";
import { tableIndexes } from "./table-indexes.js";
import type { Schema } from "./types.js";

const schema: Schema = {
  tables: {
    item: { columns: { id: "string", kind: "string", rank: "integer" }, primaryKey: ["id"] },
    tag: { columns: { id: "string", itemId: "string", kind: "string", label: "string" }, primaryKey: ["id"] },
  },
};

const compare = (column: string, op: string, value: unknown) => ({
  type: "simple",
  op,
  left: { type: "column", name: column },
  right: { type: "literal", value },
});

const exists = (parent: string, child: string, where: unknown, negated = false) => ({
  type: "correlatedSubquery",
  op: negated ? "NOT EXISTS" : "EXISTS",
  related: { correlation: { parentField: [parent], childField: [child] }, subquery: { table: "tag", where } },
});

/** Queries whose evaluation the meter counts (EXISTS probes, or a root's rows) and the engine derives indexes for. */
const SHAPES = {
  // No EXISTS: the root's rows are counted.
  kindByRank: (label: string, limit: number) => ({
    table: "item",
    orderBy: [
      ["rank", "desc"],
      ["id", "asc"],
    ],
    limit,
    where: compare("kind", "!=", label === "x" ? "a" : "b"),
  }),
  taggedById: (label: string, limit: number) => ({
    table: "item",
    orderBy: [["id", "asc"]],
    limit,
    where: exists("id", "itemId", compare("label", "=", label)),
  }),
  untagged: (label: string, limit: number) => ({
    table: "item",
    orderBy: [["rank", "desc"]],
    limit,
    where: exists("id", "itemId", compare("label", "=", label), true),
  }),
  sameKindLike: (label: string, limit: number) => ({
    table: "item",
    orderBy: [["rank", "asc"]],
    limit,
    where: {
      type: "or",
      conditions: [exists("kind", "kind", compare("label", "LIKE", `${label}%`)), compare("rank", "=", 1)],
    },
  }),
  withTags: (label: string, limit: number) => ({
    table: "item",
    orderBy: [["rank", "asc"]],
    limit,
    related: [
      {
        correlation: { parentField: ["id"], childField: ["itemId"] },
        subquery: {
          table: "tag",
          orderBy: [["label", "desc"]],
          limit: 1,
          where: compare("label", "!=", label),
        },
      },
    ],
    where: exists("id", "itemId", compare("label", "=", label)),
  }),
};

const KINDS = ["a", "b"];
const LABELS = ["x", "y", "z"];

const item = fc.record({ kind: fc.constantFrom(...KINDS), rank: fc.integer({ min: 0, max: 5 }) });
const tag = fc.record({
  item: fc.nat(),
  kind: fc.constantFrom(...KINDS),
  label: fc.constantFrom(...LABELS),
});
const scenario = fc.record({
  items: fc.array(item, { maxLength: 25 }),
  tags: fc.array(tag, { maxLength: 40 }),
  later: fc.array(tag, { maxLength: 10 }),
  dropped: fc.array(fc.nat(), { maxLength: 5 }),
  shape: fc.constantFrom(...(Object.keys(SHAPES) as Array<keyof typeof SHAPES>)),
  label: fc.constantFrom(...LABELS),
  limit: fc.integer({ min: 1, max: 6 }),
});

// Metered evaluation (the work term in every EXISTS probe and root without one, a budget it
// never reaches) over the indexes derived from the query answers exactly what an unmetered
// evaluation without them answers: on hydration and after writes, the group holds the rows `queryRows` finds on a twin
// database that has neither.
describe.each(DATABASES)("metered queries over derived indexes on $kind", ({ open }) => {
  it("answer every query as an unmetered evaluation does", async () => {
    const engine = await testEngine();
    let work = 0;
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        const metered = new Namespace(engine, open(), schema);
        const twin = new Namespace(engine, open(), schema);
        const both = (sql: string, params: Array<string | number>) => {
          metered.sql(sql, params);
          twin.sql(sql, params);
        };
        for (const [i, row] of s.items.entries()) {
          both("INSERT INTO item VALUES (?, ?, ?)", [`i${i}`, row.kind, row.rank]);
        }
        const addTags = (tags: typeof s.tags, prefix: string) =>
          tags.forEach((row, i) => {
            const itemId = s.items.length === 0 ? "none" : `i${row.item % s.items.length}`;
            both("INSERT INTO tag VALUES (?, ?, ?, ?)", [`${prefix}${i}`, itemId, row.kind, row.label]);
          });
        addTags(s.tags, "t");
        const ast = SHAPES[s.shape](s.label, s.limit);
        const client = new ClientRows();
        const expected = () =>
          engine
            .queryRows(twin.db.adapter, ast)
            .map((row) => `${row.table}/${JSON.stringify(row.key)}`)
            .sort();
        const pull = (patch: unknown[] = []) => {
          const result = metered.pull({
            cookie: client.cookie,
            queries: { patch: patch as never },
            queryBudgetMs: 60_000,
          });
          client.apply(result.json as never, schema);
          return result;
        };
        const first = pull([{ op: "put", hash: "q", name: s.shape, args: [s.label], ast }]);
        work += first.queryWork;
        expect(first.json.gotQueries).toEqual(["q"]);
        expect(client.keys()).toEqual(expected());
        addTags(s.later, "u");
        for (const n of s.dropped)
          if (s.tags.length > 0) both("DELETE FROM tag WHERE id = ?", [`t${n % s.tags.length}`]);
        pull();
        expect(client.keys()).toEqual(expected());
        expect(tableIndexes(twin.db.adapter)).toEqual([]);
        metered.db.close();
        twin.db.close();
      }),
      { numRuns: 40 },
    );
    // The probes were metered (the work term ran), not merely allowed.
    expect(work).toBeGreaterThan(0);
  });

  it("derives an index for each correlation, EXISTS narrowing and window, and none the key serves", async () => {
    const engine = await testEngine();
    const ns = new Namespace(engine, open(), schema);
    for (const [name, shape] of Object.entries(SHAPES)) {
      ns.pull({
        clientGroupID: name,
        cookie: null,
        queries: { patch: [{ op: "put", hash: name, name, args: [], ast: shape("x", 3) }] },
      });
    }
    expect(tableIndexes(ns.db.adapter).map((index) => `${index.name} ${index.columns}`)).toEqual([
      '_weir_qx:item(rank) "rank"',
      '_weir_qx:item(rank-) "rank" DESC',
      '_weir_qx:tag(itemId,label) "itemId", "label"',
      '_weir_qx:tag(itemId,label-) "itemId", "label" DESC',
      '_weir_qx:tag(kind) "kind"',
      '_weir_qx:tag(kind,label) "kind", "label"',
    ]);
    ns.db.close();
  });
});

// The rows a query's related subqueries and its EXISTS witnesses read are metered as its probes'
// are: a relation correlated on a column every row shares, narrowed by a pattern no index
// narrows, reads every row of its table in one statement, and so does a witness whose condition
// an OR's other side spares the probe.
describe.each(DATABASES)("metered related subqueries and witnesses on $kind", ({ open }) => {
  const TAGS = 3000;
  const likeNothing = compare("label", "LIKE", "%zzz%");
  const QUERIES = {
    relatedOfKind: {
      table: "item",
      orderBy: [["id", "asc"]],
      limit: 4,
      related: [
        {
          correlation: { parentField: ["kind"], childField: ["kind"] },
          subquery: { table: "tag", orderBy: [["id", "asc"]], where: likeNothing },
        },
      ],
    },
    witnessOfKind: {
      table: "item",
      orderBy: [["id", "asc"]],
      limit: 4,
      where: { type: "or", conditions: [compare("kind", "=", "a"), exists("kind", "kind", likeNothing)] },
    },
  };

  async function tagged() {
    const ns = new Namespace(await testEngine(), open(), schema);
    ns.sql("INSERT INTO item VALUES ('i0', 'a', 0), ('i1', 'a', 1), ('i2', 'a', 2), ('i3', 'a', 3)", []);
    ns.sql(
      "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < ?) " +
        "INSERT INTO tag SELECT printf('t%05d', i), 'i0', 'a', 'label ' || i FROM n",
      [TAGS],
    );
    return ns;
  }

  it.each(Object.keys(QUERIES) as Array<keyof typeof QUERIES>)(
    "counts the rows %s reads toward its work, and refuses it past its budget",
    async (name) => {
      const ns = await tagged();
      const put = { op: "put" as const, hash: name, name, args: [], ast: QUERIES[name] };
      const answered = ns.pull({ cookie: null, queries: { patch: [put] }, queryBudgetMs: 60_000 });
      expect(answered.json.gotQueries).toEqual([name]);
      // Every tag, for each of the four items or for their one kind.
      expect(answered.queryWork).toBeGreaterThanOrEqual(TAGS);
      ns.db.close();
      // Read past a budget of 0 ms (checked each 1,024 rows), the query is refused, naming it. (In
      // a namespace of its own: there another group would lend it the rows.)
      const refusing = await tagged();
      expect(() => refusing.pull({ cookie: null, queries: { patch: [put] }, queryBudgetMs: 0 })).toThrow(
        expect.objectContaining({
          code: "query_budget_exceeded",
          message: expect.stringMatching(
            new RegExp(`^query ${name} \\(${name}\\) passed its work budget of 0 ms`),
          ),
        }),
      );
      refusing.db.close();
    },
  );

  it("meters the evaluations of a group's pulls that leave out queries", async () => {
    const ns = await tagged();
    const put = {
      op: "put" as const,
      hash: "q",
      name: "relatedOfKind",
      args: [],
      ast: QUERIES.relatedOfKind,
    };
    const first = ns.pull({ cookie: null, queries: { patch: [put] }, queryBudgetMs: 60_000 });
    expect(first.json.gotQueries).toEqual(["q"]);
    // A write to a tag has the query evaluated again on the group's next pull, which carries no
    // queries field: past its budget it is refused as a pull with the field would be.
    ns.sql("UPDATE tag SET label = 'a zzz' WHERE id = 't00007'", []);
    expect(() => ns.pull({ cookie: first.json.cookie as number, queryBudgetMs: 0 })).toThrow(
      expect.objectContaining({ code: "query_budget_exceeded" }),
    );
    const answered = ns.pull({ cookie: first.json.cookie as number, queryBudgetMs: 60_000 });
    expect(answered.queryWork).toBeGreaterThanOrEqual(TAGS);
  });
});
