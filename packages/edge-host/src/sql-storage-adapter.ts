import type { SqlAdapter, SqlValue } from "@weir/engine-wasm";

type Binding = string | number | null | ArrayBuffer;

/** Values as a Durable Object's SQL binds them: no bigint, blobs as ArrayBuffer. */
function binding(value: SqlValue): Binding {
  if (typeof value === "bigint") {
    // Beyond 2^53 a double would round; SQLite compares and casts the decimal text exactly.
    return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString();
  }
  if (value instanceof Uint8Array) {
    return value.buffer.slice(value.byteOffset, value.byteOffset + value.byteLength) as ArrayBuffer;
  }
  return value;
}

function bindings(params: readonly SqlValue[]): Binding[] {
  return params.length === 0 ? [] : params.map(binding);
}

/**
 * A `SqlAdapter` over a Durable Object's `ctx.storage.sql`. Transactions stay with the caller
 * (`ctx.storage.transactionSync`); workerd keeps the statements prepared.
 */
export function sqlStorageAdapter(sql: SqlStorage): SqlAdapter {
  return {
    query(text, params) {
      const rows = Array.from(sql.exec(text, ...bindings(params)).raw()) as SqlValue[][];
      for (const row of rows) {
        for (let i = 0; i < row.length; i++) {
          const value = row[i] as unknown;
          if (value instanceof ArrayBuffer) row[i] = new Uint8Array(value);
        }
      }
      return rows;
    },
    exec(text, params) {
      const cursor = sql.exec(text, ...bindings(params));
      // A cursor runs its statement as it is read; drain it so the write happens now.
      for (const _ of cursor.raw()) {
        // Rows of a write statement are not needed.
      }
      // rowsWritten also counts index and trigger writes; the engine wants SQLite's changes().
      if (cursor.rowsWritten === 0) return 0;
      return Number(sql.exec("SELECT changes()").one()["changes()"]);
    },
  };
}
