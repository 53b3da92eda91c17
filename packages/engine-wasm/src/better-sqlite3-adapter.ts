import type { SqlAdapter, SqlValue } from "./types.js";

/** The parts of a better-sqlite3 `Database` the adapter uses (so this module needs no import of it). */
export interface BetterSqliteDatabase {
  prepare(sql: string): BetterSqliteStatement;
  function?(name: string, options: { varargs: boolean }, fn: (...args: unknown[]) => unknown): unknown;
}

interface BetterSqliteStatement {
  readonly reader: boolean;
  raw(toggle?: boolean): BetterSqliteStatement;
  all(...params: unknown[]): unknown[];
  run(...params: unknown[]): { changes: number };
}

// The engine's statements repeat with other values; a bounded cache keeps them prepared.
const MAX_CACHED_STATEMENTS = 512;

/** A `SqlAdapter` over a better-sqlite3 database. Transactions stay with the caller (`db.transaction`). */
export function betterSqliteAdapter(db: BetterSqliteDatabase): SqlAdapter {
  const statements = new Map<string, BetterSqliteStatement>();
  const prepare = (sql: string): BetterSqliteStatement => {
    let statement = statements.get(sql);
    if (!statement) {
      if (statements.size >= MAX_CACHED_STATEMENTS) statements.clear();
      statement = db.prepare(sql);
      if (statement.reader) statement.raw(true);
      statements.set(sql, statement);
    }
    return statement;
  };
  const adapter: SqlAdapter = {
    query: (sql, params) => prepare(sql).all(...params) as SqlValue[][],
    exec: (sql, params) => prepare(sql).run(...params).changes,
  };
  if (db.function) {
    adapter.defineFunction = (name, fn) => {
      db.function!(name, { varargs: true }, fn as (...args: unknown[]) => unknown);
    };
  }
  return adapter;
}
