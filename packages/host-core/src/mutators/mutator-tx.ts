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

/** What every statement on a table shares, built once per table rather than per call. */
interface TablePlan {
  /** The columns in schema order, as `get` answers them. */
  columns: readonly string[];
  get: string;
  /** The WHERE clause on the key. */
  where: string;
  exists: string;
  delete: string;
  /** The last write of each kind, with the columns it named (see `sqlFor`). */
  writes: Map<string, { columns: readonly string[]; sql: string }>;
}
const plans = new WeakMap<TableInfo, TablePlan>();

function planOf(info: TableInfo): TablePlan {
  let plan = plans.get(info);
  if (plan) return plan;
  const columns = [...info.columns.keys()];
  const where = info.primaryKey.map((column) => `${quote(column)} = ?`).join(" AND ");
  const table = quote(info.name);
  plan = {
    columns,
    get: `SELECT ${columns.map((c) => selectExact(info, c)).join(", ")} FROM ${table} WHERE ${where}`,
    where,
    exists: `SELECT 1 FROM ${table} WHERE ${where}`,
    delete: `DELETE FROM ${table} WHERE ${where}`,
    writes: new Map(),
  };
  plans.set(info, plan);
  return plan;
}

/**
 * The SQL of a write naming these columns, built by `build` unless the table's previous write of
 * this kind named the same ones: mutators write the same shape again and again, and the same
 * string is also a cheaper key for the adapter's statement cache than an equal new one.
 */
function sqlFor(info: TableInfo, kind: string, columns: readonly string[], build: () => string): string {
  const writes = planOf(info).writes;
  const last = writes.get(kind);
  if (last && sameColumns(last.columns, columns)) return last.sql;
  const sql = build();
  writes.set(kind, { columns, sql });
  return sql;
}

function sameColumns(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** A row's given columns and their stored values, in the row's order (undefined columns left out). */
interface RowValues {
  columns: string[];
  values: SqlValue[];
}

/**
 * The `tx` of one mutation. A class rather than closures: a push makes one per mutation, and
 * its methods then cost no allocation. Once closed (the mutation ended) every call throws.
 */
class MutationTx implements MutatorTx {
  #open = true;

  static close(tx: MutationTx): void {
    tx.#open = false;
  }

  constructor(
    private readonly db: SqlAdapter,
    private readonly tables: ReadonlyMap<string, TableInfo>,
    readonly claims: Claims,
    readonly clientID: string,
    private readonly deferred: Array<() => void | Promise<void>>,
  ) {}

  get(tableName: string, key: RowKey): Row | undefined {
    const info = this.table(tableName);
    const plan = planOf(info);
    const found = this.db.query(plan.get, keyValues(info, key))[0];
    if (!found) return undefined;
    const row: Row = {};
    const { columns } = plan;
    for (let i = 0; i < columns.length; i++) {
      const column = columns[i]!;
      row[column] = decodeValue(info.columns.get(column)!, found[i] ?? null);
    }
    return row;
  }

  insert(tableName: string, row: Row): void {
    const info = this.table(tableName);
    const { columns, values } = rowValues(info, row);
    const sql = sqlFor(
      info,
      "insert",
      columns,
      () =>
        `INSERT INTO ${quote(info.name)} (${columns.map(quote).join(", ")}) VALUES (${columns.map(() => "?").join(", ")})`,
    );
    execAsAppError(this.db, sql, values);
  }

  update(tableName: string, row: Row): boolean {
    const info = this.table(tableName);
    const key = keyValues(info, row as Record<string, unknown>);
    const given = rowValues(info, row);
    const columns: string[] = [];
    const values: SqlValue[] = [];
    for (let i = 0; i < given.columns.length; i++) {
      if (info.primaryKey.includes(given.columns[i]!)) continue;
      columns.push(given.columns[i]!);
      values.push(given.values[i]!);
    }
    if (columns.length === 0) return this.db.query(planOf(info).exists, key).length > 0;
    const sql = sqlFor(
      info,
      "update",
      columns,
      () =>
        `UPDATE ${quote(info.name)} SET ${columns.map((c) => `${quote(c)} = ?`).join(", ")} WHERE ${planOf(info).where}`,
    );
    for (const value of key) values.push(value);
    return execAsAppError(this.db, sql, values) > 0;
  }

  upsert(tableName: string, row: Row): void {
    const info = this.table(tableName);
    // A row with every required column is one INSERT ... ON CONFLICT. A partial one is not:
    // SQLite checks NOT NULL on the inserted row before the conflict, so it would fail.
    const { columns, values } = rowValues(info, row);
    if (info.required.every((column) => columns.includes(column))) {
      const sql = sqlFor(info, "upsert", columns, () => {
        const sets = columns.filter((column) => !info.primaryKey.includes(column));
        const onConflict =
          sets.length === 0
            ? "DO NOTHING"
            : `DO UPDATE SET ${sets.map((c) => `${quote(c)} = excluded.${quote(c)}`).join(", ")}`;
        return `INSERT INTO ${quote(info.name)} (${columns.map(quote).join(", ")}) VALUES (${columns.map(() => "?").join(", ")}) ON CONFLICT (${info.primaryKey.map(quote).join(", ")}) ${onConflict}`;
      });
      execAsAppError(this.db, sql, values);
      return;
    }
    const key = keyValues(info, row as Record<string, unknown>);
    if (this.db.query(planOf(info).exists, key).length > 0) this.update(tableName, row);
    else this.insert(tableName, row);
  }

  delete(tableName: string, key: RowKey): boolean {
    const info = this.table(tableName);
    return this.db.exec(planOf(info).delete, keyValues(info, key)) > 0;
  }

  query(sql: string, params: readonly SqlValue[] = []): SqlValue[][] {
    this.assertOpen();
    return this.db.query(sql, params);
  }

  exec(sql: string, params: readonly SqlValue[] = []): number {
    this.assertOpen();
    return this.db.exec(sql, params);
  }

  defer(effect: () => void | Promise<void>): void {
    this.assertOpen();
    if (typeof effect !== "function") throw new TypeError("tx.defer expects a function");
    this.deferred.push(effect);
  }

  private table(name: string): TableInfo {
    this.assertOpen();
    const info = this.tables.get(name);
    if (!info) throw new MutatorError(`unknown table ${JSON.stringify(name)}`);
    return info;
  }

  private assertOpen(): void {
    if (!this.#open)
      throw new Error("this tx was used after its mutation ended (mutators must be synchronous)");
  }
}

function encode(info: TableInfo, column: string, value: unknown): SqlValue {
  const columnInfo = info.columns.get(column);
  if (!columnInfo) throw new MutatorError(`${info.name} has no column ${JSON.stringify(column)}`);
  return encodeValue(info.name, column, columnInfo, value);
}

function keyValues(info: TableInfo, key: RowKey): SqlValue[] {
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
}

function rowValues(info: TableInfo, row: Row): RowValues {
  if (typeof row !== "object" || row === null || Array.isArray(row)) {
    throw new MutatorError(`${info.name}: a row must be an object`);
  }
  const columns: string[] = [];
  const values: SqlValue[] = [];
  for (const column of Object.keys(row)) {
    const value = row[column];
    if (value === undefined) continue;
    columns.push(column);
    values.push(encode(info, column, value));
  }
  return { columns, values };
}

/** The `tx` a mutator writes through, over the mutation's open transaction. */
export function createMutatorTx({ db, tables, claims, clientID, deferred }: MutatorTxInput): {
  api: MutatorTx;
  close(): void;
} {
  const api = new MutationTx(db, tables, claims, clientID, deferred);
  return {
    api,
    close: () => MutationTx.close(api),
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

/** Runs a write; SQLite refusing the data (a constraint) is the mutation's fault, an application error. */
function execAsAppError(db: SqlAdapter, sql: string, values: readonly SqlValue[]): number {
  try {
    return db.exec(sql, values);
  } catch (error) {
    if (isConstraintError(error)) throw new MutatorError((error as Error).message);
    throw error;
  }
}
