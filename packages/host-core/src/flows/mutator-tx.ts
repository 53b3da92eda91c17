import type { SqlAdapter, SqlValue } from "@weir/engine-wasm";
import type { Claims } from "../auth/claims.js";
import { decodeValue, encodeValue, type TableInfo } from "./column-codec.js";
import type { MutatorTx, Row, RowKey } from "./mutator.js";
import { MutatorError } from "./mutator-error.js";

export interface MutatorTxInput {
  db: SqlAdapter;
  tables: ReadonlyMap<string, TableInfo>;
  claims: Claims;
  clientID: string;
  /** Effects queued by `defer`, run by the caller after commit. */
  deferred: Array<() => void | Promise<void>>;
}

const quote = (name: string) => `"${name}"`;

/** The SQL of the last write of each kind to a table, with the columns it named. */
type LastWrites = Map<string, { columns: readonly string[]; sql: string }>;
const lastWrites = new WeakMap<TableInfo, LastWrites>();

/**
 * The SQL of a write naming these columns, built by `build` unless the table's previous write of
 * this kind named the same ones: mutators write the same shape again and again, and the same
 * string is also a cheaper key for the adapter's statement cache than an equal new one.
 */
function sqlFor(info: TableInfo, kind: string, columns: readonly string[], build: () => string): string {
  let writes = lastWrites.get(info);
  if (!writes) {
    writes = new Map();
    lastWrites.set(info, writes);
  }
  const last = writes.get(kind);
  if (last && last.columns.length === columns.length && last.columns.every((c, i) => c === columns[i])) {
    return last.sql;
  }
  const sql = build();
  writes.set(kind, { columns, sql });
  return sql;
}

/** The `tx` a mutator writes through, over the mutation's open transaction. */
export function createMutatorTx({ db, tables, claims, clientID, deferred }: MutatorTxInput): {
  api: MutatorTx;
  close(): void;
} {
  let open = true;
  const table = (name: string): TableInfo => {
    if (!open) throw new Error("this tx was used after its mutation ended (mutators must be synchronous)");
    const info = tables.get(name);
    if (!info) throw new MutatorError(`unknown table ${JSON.stringify(name)}`);
    return info;
  };

  const keyValues = (info: TableInfo, key: RowKey): SqlValue[] => {
    if (typeof key !== "object" || key === null) {
      if (info.primaryKey.length !== 1) {
        throw new MutatorError(
          `${info.name} has a composite key: pass an object of ${info.primaryKey.join(", ")}`,
        );
      }
      return [encode(info, info.primaryKey[0]!, key)];
    }
    return info.primaryKey.map((column) => {
      if (!(column in key)) throw new MutatorError(`${info.name}: the key needs ${column}`);
      return encode(info, column, (key as Record<string, unknown>)[column]);
    });
  };

  const encode = (info: TableInfo, column: string, value: unknown): SqlValue => {
    const columnInfo = info.columns.get(column);
    if (!columnInfo) throw new MutatorError(`${info.name} has no column ${JSON.stringify(column)}`);
    return encodeValue(info.name, column, columnInfo, value);
  };

  const rowEntries = (info: TableInfo, row: Row): [string, SqlValue][] => {
    if (typeof row !== "object" || row === null || Array.isArray(row)) {
      throw new MutatorError(`${info.name}: a row must be an object`);
    }
    return Object.entries(row)
      .filter(([, value]) => value !== undefined)
      .map(([column, value]) => [column, encode(info, column, value)]);
  };

  const whereKey = (info: TableInfo) => info.primaryKey.map((column) => `${quote(column)} = ?`).join(" AND ");

  const api: MutatorTx = {
    claims,
    clientID,
    get(tableName, key) {
      const info = table(tableName);
      const columns = [...info.columns.keys()];
      const sql = sqlFor(
        info,
        "get",
        columns,
        () =>
          `SELECT ${columns.map((c) => selectExact(info, c)).join(", ")} FROM ${quote(info.name)} WHERE ${whereKey(info)}`,
      );
      const found = db.query(sql, keyValues(info, key))[0];
      if (!found) return undefined;
      const row: Row = {};
      columns.forEach((column, i) => {
        row[column] = decodeValue(info.columns.get(column)!, found[i] ?? null);
      });
      return row;
    },
    insert(tableName, row) {
      const info = table(tableName);
      const entries = rowEntries(info, row);
      const columns = entries.map(([column]) => column);
      const sql = sqlFor(
        info,
        "insert",
        columns,
        () =>
          `INSERT INTO ${quote(info.name)} (${columns.map(quote).join(", ")}) VALUES (${columns.map(() => "?").join(", ")})`,
      );
      asAppError(() =>
        db.exec(
          sql,
          entries.map(([, value]) => value),
        ),
      );
    },
    update(tableName, row) {
      const info = table(tableName);
      const key = keyValues(info, row as Record<string, unknown>);
      const sets = rowEntries(info, row).filter(([column]) => !info.primaryKey.includes(column));
      if (sets.length === 0) {
        return db.query(`SELECT 1 FROM ${quote(info.name)} WHERE ${whereKey(info)}`, key).length > 0;
      }
      const columns = sets.map(([column]) => column);
      const sql = sqlFor(
        info,
        "update",
        columns,
        () =>
          `UPDATE ${quote(info.name)} SET ${columns.map((c) => `${quote(c)} = ?`).join(", ")} WHERE ${whereKey(info)}`,
      );
      return asAppError(() => db.exec(sql, [...sets.map(([, value]) => value), ...key])) > 0;
    },
    upsert(tableName, row) {
      const info = table(tableName);
      // A row with every required column is one INSERT ... ON CONFLICT. A partial one is not:
      // SQLite checks NOT NULL on the inserted row before the conflict, so it would fail.
      const entries = rowEntries(info, row);
      if (info.required.every((column) => entries.some(([given]) => given === column))) {
        const columns = entries.map(([column]) => column);
        const sql = sqlFor(info, "upsert", columns, () => {
          const sets = columns.filter((column) => !info.primaryKey.includes(column));
          const onConflict =
            sets.length === 0
              ? "DO NOTHING"
              : `DO UPDATE SET ${sets.map((c) => `${quote(c)} = excluded.${quote(c)}`).join(", ")}`;
          return `INSERT INTO ${quote(info.name)} (${columns.map(quote).join(", ")}) VALUES (${columns.map(() => "?").join(", ")}) ON CONFLICT (${info.primaryKey.map(quote).join(", ")}) ${onConflict}`;
        });
        asAppError(() =>
          db.exec(
            sql,
            entries.map(([, value]) => value),
          ),
        );
        return;
      }
      const key = keyValues(info, row as Record<string, unknown>);
      const exists = db.query(`SELECT 1 FROM ${quote(info.name)} WHERE ${whereKey(info)}`, key).length > 0;
      if (exists) api.update(tableName, row);
      else api.insert(tableName, row);
    },
    delete(tableName, key) {
      const info = table(tableName);
      return db.exec(`DELETE FROM ${quote(info.name)} WHERE ${whereKey(info)}`, keyValues(info, key)) > 0;
    },
    query(sql, params = []) {
      assertOpen();
      return db.query(sql, params);
    },
    exec(sql, params = []) {
      assertOpen();
      return db.exec(sql, params);
    },
    defer(effect) {
      assertOpen();
      if (typeof effect !== "function") throw new TypeError("tx.defer expects a function");
      deferred.push(effect);
    },
  };
  const assertOpen = () => {
    if (!open) throw new Error("this tx was used after its mutation ended (mutators must be synchronous)");
  };
  return {
    api,
    close: () => {
      open = false;
    },
  };
}

/**
 * A column as `get` selects it. Integers beyond 2^53 come as their decimal text (no adapter has
 * to give bigints), which `decodeValue` turns into a bigint, so a row read and written back is
 * the same row.
 */
function selectExact(info: TableInfo, column: string): string {
  const name = quote(column);
  if (info.columns.get(column)!.type !== "integer") return name;
  return `CASE WHEN ${name} BETWEEN ${-Number.MAX_SAFE_INTEGER} AND ${Number.MAX_SAFE_INTEGER} THEN ${name} ELSE CAST(${name} AS TEXT) END`;
}

/**
 * Whether an error is SQLite refusing the data (a constraint), which retrying can never fix, so
 * it is the mutation's fault: an application error rather than a server failure.
 */
export function isConstraintError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string" && code.startsWith("SQLITE_CONSTRAINT")) return true;
  return /constraint failed/i.test(error.message);
}

function asAppError<T>(fn: () => T): T {
  try {
    return fn();
  } catch (error) {
    if (isConstraintError(error)) throw new MutatorError((error as Error).message);
    throw error;
  }
}
