// The Zero query corpus that engine-wasm keeps as test data (its test/corpus: MIT, from the orez
// project), read from there for host-core's HTTP test: the data files, with the same reading of
// them as engine-wasm's test/zero-corpus.ts (every column but the key nullable; the app's read
// permissions as visibility filters).
import { readFileSync } from "node:fs";
import type { Schema, TableSchema, Visibility } from "@weir/engine-wasm";

const read = (path: string) =>
  JSON.parse(readFileSync(new URL(`../../engine-wasm/test/${path}`, import.meta.url), "utf8"));

export interface CorpusCase {
  ns: string;
  name: string;
  args: unknown;
  user: string;
  ast: unknown;
  rootTable: string;
  expect: string[];
}

export const corpus = read("corpus/zero-queries-sample.json") as {
  schema: { tables: Record<string, { columns: Record<string, { type: string }>; primaryKey: string[] }> };
  seed: Record<string, string[]>;
  cases: CorpusCase[];
};

const permissions = read("corpus-permissions.json") as {
  visibility: Record<string, { sql: string; params: string[] }>;
};

export function corpusSchema(): Schema {
  const tables: Record<string, TableSchema> = {};
  for (const [name, table] of Object.entries(corpus.schema.tables)) {
    const columns: TableSchema["columns"] = {};
    for (const [column, { type }] of Object.entries(table.columns)) {
      columns[column] = { type: type as "string", nullable: !table.primaryKey.includes(column) };
    }
    tables[name] = { columns, primaryKey: table.primaryKey };
  }
  return { tables };
}

export function corpusVisibility(user: string): Visibility {
  const visibility: Visibility = {};
  for (const [table, { sql, params }] of Object.entries(permissions.visibility)) {
    visibility[table] = { sql, params: params.map((param) => (param === "$user" ? user : param)) };
  }
  return visibility;
}
