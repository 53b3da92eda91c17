import type { SqlAdapter, SqlValue } from "./types.js";

/** The parts of a sql.js `Database` the adapter uses (so this module needs no import of it). */
export interface SqlJsDatabase {
  prepare(sql: string): SqlJsStatement;
  getRowsModified(): number;
  create_function?(name: string, fn: (...args: unknown[]) => unknown): unknown;
}

interface SqlJsStatement {
  // sql.js binds bigint too, though its published types do not say so.
  bind(params: Exclude<SqlValue, bigint>[]): boolean;
  step(): boolean;
  get(): unknown[];
  reset(): void;
  free(): boolean;
}

const MAX_CACHED_STATEMENTS = 512;

/** A `SqlAdapter` over a sql.js database (pure WASM SQLite, no native module). */
export function sqlJsAdapter(db: SqlJsDatabase): SqlAdapter {
  const statements = new Map<string, SqlJsStatement>();
  const prepare = (sql: string): SqlJsStatement => {
    let statement = statements.get(sql);
    if (!statement) {
      if (statements.size >= MAX_CACHED_STATEMENTS) {
        for (const cached of statements.values()) cached.free();
        statements.clear();
      }
      statement = db.prepare(sql);
      statements.set(sql, statement);
    }
    return statement;
  };
  const adapter: SqlAdapter = {
    query(sql, params) {
      const statement = prepare(sql);
      try {
        statement.bind(params as Exclude<SqlValue, bigint>[]);
        const rows: SqlValue[][] = [];
        while (statement.step()) rows.push(statement.get() as SqlValue[]);
        return rows;
      } finally {
        statement.reset();
      }
    },
    exec(sql, params) {
      const statement = prepare(sql);
      try {
        statement.bind(params as Exclude<SqlValue, bigint>[]);
        while (statement.step()) {
          // Statements run for their effect; any rows they return are not needed.
        }
        return db.getRowsModified();
      } finally {
        statement.reset();
      }
    },
  };
  if (db.create_function) {
    adapter.defineFunction = (name, fn) => {
      db.create_function!(name, fn as (...args: unknown[]) => unknown);
    };
  }
  return adapter;
}
