import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import { DATABASES, testEngine } from "../test/databases.js";
import { Namespace } from "../test/fixtures.js";
import { QueryPages, QueryPageTurn } from "./query-pages.js";
import type { PullInput, Schema } from "./types.js";

// `link` has a key of two columns: its pages are bounded by both.
const schema: Schema = {
  tables: {
    item: { columns: { id: "string", kind: "string", rank: "integer" }, primaryKey: ["id"] },
    tag: { columns: { id: "string", itemId: "string", kind: "string", label: "string" }, primaryKey: ["id"] },
    link: { columns: { a: "string", b: "integer", rank: "integer" }, primaryKey: ["a", "b"] },
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

/** Queries whose root holds an EXISTS (the roots that are paged), with orders, limits, related rows. */
const SHAPES = {
  taggedById: (label: string, limit?: number) => ({
    table: "item",
    orderBy: [["id", "asc"]],
    ...(limit === undefined ? {} : { limit }),
    where: exists("id", "itemId", compare("label", "=", label)),
  }),
  untaggedByRank: (label: string, limit?: number) => ({
    table: "item",
    orderBy: [
      ["rank", "desc"],
      ["id", "asc"],
    ],
    ...(limit === undefined ? {} : { limit }),
    where: exists("id", "itemId", compare("label", "=", label), true),
  }),
  sameKindOrRank: (label: string, limit?: number) => ({
    table: "item",
    orderBy: [
      ["rank", "asc"],
      ["id", "desc"],
    ],
    ...(limit === undefined ? {} : { limit }),
    where: {
      type: "or",
      conditions: [exists("kind", "kind", compare("label", "LIKE", `${label}%`)), compare("rank", "=", 1)],
    },
  }),
  withTags: (label: string, limit?: number) => ({
    table: "item",
    orderBy: [
      ["rank", "asc"],
      ["id", "asc"],
    ],
    ...(limit === undefined ? {} : { limit }),
    related: [
      {
        correlation: { parentField: ["id"], childField: ["itemId"] },
        subquery: {
          table: "tag",
          orderBy: [
            ["label", "desc"],
            ["id", "asc"],
          ],
          limit: 1,
          where: compare("label", "!=", label),
        },
      },
    ],
    where: exists("id", "itemId", compare("label", "=", label)),
  }),
  links: (label: string, limit?: number) => ({
    table: "link",
    orderBy: [
      ["rank", "desc"],
      ["a", "asc"],
      ["b", "asc"],
    ],
    ...(limit === undefined ? {} : { limit }),
    where: exists("a", "itemId", compare("label", "=", label)),
  }),
};

const KINDS = ["a", "b"];
const LABELS = ["x", "y", "z"];

const item = fc.record({ kind: fc.constantFrom(...KINDS), rank: fc.integer({ min: 0, max: 5 }) });
const tag = fc.record({ item: fc.nat(), kind: fc.constantFrom(...KINDS), label: fc.constantFrom(...LABELS) });
const link = fc.record({
  item: fc.nat(),
  b: fc.integer({ min: -3, max: 3 }),
  rank: fc.integer({ min: 0, max: 3 }),
});
const scenario = fc.record({
  items: fc.array(item, { maxLength: 25 }),
  tags: fc.array(tag, { maxLength: 40 }),
  links: fc.array(link, { maxLength: 30 }),
  later: fc.array(tag, { maxLength: 10 }),
  dropped: fc.array(fc.nat(), { maxLength: 5 }),
  shape: fc.constantFrom(...(Object.keys(SHAPES) as Array<keyof typeof SHAPES>)),
  label: fc.constantFrom(...LABELS),
  limit: fc.option(fc.integer({ min: 1, max: 6 }), { nil: undefined }),
  // Root rows a page reads (1, or a few), and whether a run stops after every page.
  pageRows: fc.oneof(fc.constant(1), fc.integer({ min: 2, max: 9 })),
  everyPage: fc.boolean(),
});

/** Runs the pull again after each stop between pages, as a host does after a turn. */
function pagedPull(ns: Namespace, input: Partial<PullInput> & { cookie: number | null }, pages: QueryPages) {
  for (let runs = 0; ; runs++) {
    expect(runs).toBeLessThan(10_000);
    try {
      return ns.pull({ ...input, queryPages: pages });
    } catch (error) {
      if (!(error instanceof QueryPageTurn)) throw error;
    }
  }
}

// A pull whose query roots are read in pages, stopped and run again between them, answers
// exactly what a pull that reads them whole answers: on hydration, after writes, and after a
// write between two runs of a paged pull (which reads the pages again).
describe.each(DATABASES)("query roots read in pages on $kind", ({ open }) => {
  it("answer exactly as one statement does (pages of 1 row, of a random size)", async () => {
    const engine = await testEngine();
    let pagesRead = 0;
    let turns = 0;
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        const paged = new Namespace(engine, open(), schema);
        const whole = new Namespace(engine, open(), schema);
        const both = (sql: string, params: Array<string | number>) => {
          paged.sql(sql, params);
          whole.sql(sql, params);
        };
        for (const [i, row] of s.items.entries())
          both("INSERT INTO item VALUES (?, ?, ?)", [`i${i}`, row.kind, row.rank]);
        const itemOf = (n: number) => (s.items.length === 0 ? "none" : `i${n % s.items.length}`);
        const addTags = (tags: typeof s.tags, prefix: string) =>
          tags.forEach((row, i) => {
            both("INSERT INTO tag VALUES (?, ?, ?, ?)", [
              `${prefix}${i}`,
              itemOf(row.item),
              row.kind,
              row.label,
            ]);
          });
        addTags(s.tags, "t");
        for (const row of s.links)
          both("INSERT OR IGNORE INTO link VALUES (?, ?, ?)", [itemOf(row.item), row.b, row.rank]);
        const ast = SHAPES[s.shape](s.label, s.limit);
        const options = { pageMs: s.everyPage ? 0 : 60_000, pageRows: s.pageRows };
        const pull = (cookie: number | null, patch: unknown[] = []) => {
          const input = { cookie, queries: { patch: patch as never }, queryBudgetMs: 60_000 };
          const pages = new QueryPages(options);
          const answer = pagedPull(paged, input, pages);
          pagesRead += pages.pages;
          turns += pages.turns;
          const expected = whole.pull(input);
          expect(answer.json).toEqual(expected.json);
          return answer.json.cookie;
        };
        let cookie = pull(null, [{ op: "put", hash: "q", name: s.shape, args: [s.label], ast }]);
        addTags(s.later, "u");
        for (const n of s.dropped)
          if (s.tags.length > 0) both("DELETE FROM tag WHERE id = ?", [`t${n % s.tags.length}`]);
        cookie = pull(cookie);
        // A new group's hydration of a query no other group holds (none lends its rows), with a
        // write after the first run stopped between pages.
        const put = { op: "put", hash: "q2", name: s.shape, args: [s.label], ast };
        const input = {
          clientGroupID: "g2",
          cookie: null,
          queries: { patch: [put] as never },
          queryBudgetMs: 60_000,
        };
        const pages = new QueryPages({ pageMs: 0, pageRows: s.pageRows });
        try {
          paged.pull({ ...input, queryPages: pages });
        } catch (error) {
          if (!(error instanceof QueryPageTurn)) throw error;
        }
        both("INSERT INTO tag VALUES (?, ?, ?, ?)", ["late", itemOf(0), "a", s.label]);
        expect(pagedPull(paged, input, pages).json).toEqual(whole.pull(input).json);
        paged.db.close();
        whole.db.close();
        return cookie >= 0;
      }),
      { numRuns: 60 },
    );
    // Roots were read in pages, and runs were stopped between them, not merely allowed to be.
    expect(pagesRead).toBeGreaterThan(0);
    expect(turns).toBeGreaterThan(0);
  });
});

describe("a run of a paged pull", () => {
  /** Reads pages of `pageMs` each on a clock the test moves; answers how many the run read before it stopped. */
  function pagesBeforeTurn(options: { pageMs: number; pageRows?: number }, pageMs: number, setupMs: number) {
    let clock = 0;
    const now = vi.spyOn(performance, "now").mockImplementation(() => clock);
    try {
      const pages = new QueryPages(options);
      pages.begin();
      clock += setupMs;
      for (let read = 1; read <= 100; read++) {
        pages.state("h", "plan", "1");
        clock += pageMs;
        try {
          pages.kept("h", "plan", `["k${read}"]`, `[["k${read}"]]`);
        } catch (error) {
          if (error instanceof QueryPageTurn) return read;
          throw error;
        }
      }
      return Number.POSITIVE_INFINITY;
    } finally {
      now.mockRestore();
    }
  }

  it("stops before a page that would end past its time, not after it", () => {
    // Pages of one row at 2 ms each: the third would end at 6 ms, past the run's 5.
    expect(pagesBeforeTurn({ pageMs: 5, pageRows: 1 }, 2, 0)).toBe(2);
    // With 2 ms before the first page, the second would end at 6 ms.
    expect(pagesBeforeTurn({ pageMs: 5, pageRows: 1 }, 2, 2)).toBe(1);
    // At 1 ms a page the fifth ends at 5 ms: it is read, and the sixth is not.
    expect(pagesBeforeTurn({ pageMs: 5, pageRows: 1 }, 1, 0)).toBe(5);
    // Every run reads a page, however slow.
    expect(pagesBeforeTurn({ pageMs: 5, pageRows: 1 }, 30, 0)).toBe(1);
    // 0: a turn after every page; a clock that does not move while code runs (the edge) never turns.
    expect(pagesBeforeTurn({ pageMs: 0, pageRows: 1 }, 0, 0)).toBe(1);
    expect(pagesBeforeTurn({ pageMs: 5, pageRows: 1 }, 0, 0)).toBe(Number.POSITIVE_INFINITY);
  });
});
