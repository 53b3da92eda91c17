import { readFileSync } from "node:fs";
import type { QueryAST } from "@weir/protocol";
import { nodeWitnesses } from "../src/condition-witnesses.js";
import type { Schema, TableSchema, Visibility } from "../src/types.js";

/** The Zero query corpus (test/corpus, MIT, from the orez project). */
export interface CorpusCase {
  ns: string;
  name: string;
  args: unknown;
  user: string;
  ast: QueryAST;
  rootTable: string;
  expect: string[];
}

interface Corpus {
  schema: { tables: Record<string, { columns: Record<string, { type: string }>; primaryKey: string[] }> };
  seed: Record<string, string[]>;
  cases: CorpusCase[];
}

export const corpus = JSON.parse(
  readFileSync(new URL("./corpus/zero-queries-sample.json", import.meta.url), "utf8"),
) as Corpus;

/**
 * The corpus's schema as weir declares it. Zero columns may be missing from a row (the seed
 * leaves most of them out), so every column but the primary key's is nullable.
 */
export function corpusSchema(): Schema {
  const tables: Record<string, TableSchema> = {};
  for (const [name, table] of Object.entries(corpus.schema.tables)) {
    const columns: TableSchema["columns"] = {};
    for (const [column, { type }] of Object.entries(table.columns)) {
      const key = table.primaryKey.includes(column);
      columns[column] = { type: type as "string", nullable: !key };
    }
    tables[name] = { columns, primaryKey: table.primaryKey };
  }
  return { tables };
}

/**
 * Which of a case's held nodes holds its root rows: the root, or (for a query rooted at a parent,
 * like a channel with its messages) the first related subquery of the root table's rows.
 */
export function expectedNode(testCase: CorpusCase): number {
  if (testCase.ast.table === testCase.rootTable) return 0;
  let position = 1;
  // A held node's size counts its related subqueries, then its conditions' witnesses.
  const size = (ast: QueryAST): number =>
    1 +
    (ast.related ?? []).reduce((sum, r) => sum + size(r.subquery), 0) +
    nodeWitnesses(ast.where, "").reduce((sum, { subquery }) => sum + size(subquery.subquery), 0);
  for (const related of testCase.ast.related ?? []) {
    if (related.subquery.table === testCase.rootTable) return position;
    position += size(related.subquery);
  }
  throw new Error(`${testCase.name}: no subquery of ${testCase.rootTable}`);
}

interface Permissions {
  visibility: Record<string, { sql: string; params: string[] }>;
}

const permissions = JSON.parse(
  readFileSync(new URL("./corpus-permissions.json", import.meta.url), "utf8"),
) as Permissions;

/**
 * The chat app's read permissions as visibility filters for `user` (corpus-permissions.json:
 * Zero applied them on its server when the corpus was harvested; they are not in the ASTs).
 */
export function corpusVisibility(user: string): Visibility {
  const visibility: Visibility = {};
  for (const [table, { sql, params }] of Object.entries(permissions.visibility)) {
    visibility[table] = { sql, params: params.map((param) => (param === "$user" ? user : param)) };
  }
  return visibility;
}
