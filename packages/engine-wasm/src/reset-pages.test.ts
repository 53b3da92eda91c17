import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DATABASES, leanTestEngine, testEngine } from "../test/databases.js";
import { Namespace, type PullBody } from "../test/fixtures.js";
import { QueryPages, QueryPageTurn } from "./query-pages.js";
import type { PullInput, Schema } from "./types.js";

// `link` has a key of two columns (one an integer): its pages are bounded by both. `note` is
// filtered by its owner.
const schema: Schema = {
  tables: {
    note: { columns: { id: "string", owner: "string", text: "string" }, primaryKey: ["id"] },
    link: { columns: { a: "string", b: "integer", rank: "integer" }, primaryKey: ["a", "b"] },
  },
};
const KEYS: Record<string, string[]> = { note: ["id"], link: ["a", "b"] };
const mine = { note: { sql: "owner = ?", params: ["u"] } };

/** A write between two runs of the paged reset. */
const write = fc.oneof(
  fc.record({
    kind: fc.constant("note" as const),
    id: fc.nat(12),
    owner: fc.constantFrom("u", "v"),
    text: fc.string({ maxLength: 3 }),
  }),
  fc.record({ kind: fc.constant("dropNote" as const), id: fc.nat(12) }),
  fc.record({
    kind: fc.constant("link" as const),
    a: fc.nat(4),
    b: fc.integer({ min: -2, max: 2 }),
    rank: fc.nat(3),
  }),
  fc.record({ kind: fc.constant("dropLink" as const), a: fc.nat(4), b: fc.integer({ min: -2, max: 2 }) }),
);
const scenario = fc.record({
  before: fc.array(write, { maxLength: 30 }),
  // Writes after each run that stopped between pages (by run), and the runs after which the log
  // is pruned to nothing (the floor passes the first page's version: the pages are read again).
  between: fc.array(fc.array(write, { maxLength: 3 }), { maxLength: 12 }),
  pruneAfter: fc.array(fc.nat(12), { maxLength: 2 }),
  pageRows: fc.integer({ min: 1, max: 7 }),
  dialect: fc.constantFrom("native" as const, "replicache" as const),
  filtered: fc.boolean(),
});

type Write =
  | { kind: "note"; id: number; owner: string; text: string }
  | { kind: "dropNote"; id: number }
  | { kind: "link"; a: number; b: number; rank: number }
  | { kind: "dropLink"; a: number; b: number };

function apply(ns: Namespace, w: Write): void {
  if (w.kind === "note")
    ns.sql("INSERT OR REPLACE INTO note VALUES (?, ?, ?)", [`n${w.id}`, w.owner, w.text]);
  else if (w.kind === "dropNote") ns.sql("DELETE FROM note WHERE id = ?", [`n${w.id}`]);
  else if (w.kind === "link")
    ns.sql("INSERT OR REPLACE INTO link VALUES (?, ?, ?)", [`a${w.a}`, w.b, w.rank]);
  else ns.sql("DELETE FROM link WHERE a = ? AND b = ?", [`a${w.a}`, w.b]);
}

/** What a client holds after applying a reset's answer to nothing: rows by table and key. */
function held(body: PullBody): Map<string, unknown> {
  const rows = new Map<string, unknown>();
  const ops = (body.rowsPatch ?? body.patch ?? []) as Array<Record<string, unknown>>;
  expect(ops[0]).toEqual({ op: "clear" });
  for (const op of ops.slice(1)) {
    const key =
      typeof op.key === "string"
        ? op.key
        : `${op.tableName}/${JSON.stringify(KEYS[op.tableName as string]!.map((k) => ((op.value ?? op.id) as Record<string, unknown>)[k]))}`;
    if (op.op === "put") rows.set(key, op.value);
    else rows.delete(key);
  }
  return rows;
}

// A reset read in pages of a table at a time, stopped after every page and run again with
// writes (and retention) in between, leaves the client holding exactly what a reset read in one
// statement at the end gives it, at the same cookie and with the same mutation ids.
describe.each(DATABASES)("a reset read in pages on $kind", ({ open }) => {
  it("leaves the client what one statement's reset leaves it, whatever is written between pages", async () => {
    const engine = await testEngine();
    let turns = 0;
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        const ns = new Namespace(engine, open(), schema);
        for (const w of s.before) apply(ns, w);
        const input: Partial<PullInput> & { cookie: null } = {
          cookie: null,
          dialect: s.dialect,
          ...(s.filtered ? { visibility: mine } : {}),
        };
        const pages = new QueryPages({ pageMs: 0, pageRows: s.pageRows });
        let answer: ReturnType<Namespace["pull"]> | null = null;
        for (let runs = 0; answer === null; runs++) {
          expect(runs).toBeLessThan(1_000);
          try {
            answer = ns.pull({ ...input, queryPages: pages });
          } catch (error) {
            if (!(error instanceof QueryPageTurn)) throw error;
            turns++;
            for (const w of s.between[runs] ?? []) apply(ns, w);
            if (s.pruneAfter.includes(runs)) ns.db.transaction(() => ns.engine.prune(ns.db.adapter, 0));
          }
        }
        const whole = ns.pull({ ...input, clientGroupID: "whole" });
        expect(answer.reset).toBe(true);
        expect(answer.json.cookie).toBe(whole.json.cookie);
        expect(answer.json.lastMutationIDChanges).toEqual({});
        expect(held(answer.json)).toEqual(held(whole.json));
        expect(answer.puts + answer.dels).toBe((answer.json.rowsPatch ?? answer.json.patch)!.length - 1);
        ns.db.close();
      }),
      { numRuns: 80 },
    );
    // The property ran pulls that stopped between pages.
    expect(turns).toBeGreaterThan(80);
  });
});

// The lean build serves hosts whose drivers cannot call back into JavaScript: it reads a reset
// whole, pages or not.
describe("the lean build", () => {
  it("reads a reset in one statement", async () => {
    const ns = new Namespace(await leanTestEngine(), DATABASES[0].open(), schema);
    for (let i = 0; i < 5; i++) ns.sql("INSERT INTO note VALUES (?, 'u', '')", [`n${i}`]);
    const pages = new QueryPages({ pageMs: 0, pageRows: 1 });
    const answer = ns.pull({ cookie: null, queryPages: pages });
    expect(pages.turns).toBe(0);
    expect(held(answer.json).size).toBe(5);
    ns.db.close();
  });
});
