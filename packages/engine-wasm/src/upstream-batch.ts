import type { UpstreamChange } from "@weir/protocol";
import { EngineError } from "./engine-error.js";
import type { ColumnType, Schema } from "./types.js";

/** A change as the upstream contract sends it (its watermark is not needed here). */
export type UpstreamRowChange = Pick<UpstreamChange, "tableName" | "op" | "rowData" | "oldData">;

/** What a value is written as: JSON numbers and strings, or null; bigints go as decimal text. */
export type StoredValue = number | string | null;

/** One table's share of a batch, reduced to a final write per row. */
export interface TableWrites {
  table: string;
  /** Every row goes first (a TRUNCATE in the batch; only changes after the last one remain). */
  truncate: boolean;
  /** Keys, in primary-key order. */
  deletes: StoredValue[][];
  /** Rows, in the schema's column order. */
  upserts: StoredValue[][];
}

/** A row the schema cannot hold a value of: left out of the namespace (see reduceUpstreamBatch). */
export interface QuarantinedRow {
  table: string;
  reason: string;
}

export interface ReducedBatch {
  tables: TableWrites[];
  /** Rows whose values the schema's columns cannot hold, in the batch's order. */
  quarantined: QuarantinedRow[];
  /** Changes for tables the schema models, and for those it does not (they only move the cursor). */
  modelled: number;
  unmodelled: number;
}

interface ColumnPlan {
  name: string;
  type: ColumnType;
  nullable: boolean;
}

interface TablePlan {
  name: string;
  columns: ColumnPlan[];
  byName: Map<string, number>;
  key: number[];
}

const DECIMAL_INTEGER = /^-?(0|[1-9][0-9]{0,18})$/;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

const plans = new WeakMap<Schema, Map<string, TablePlan>>();

function tablePlans(schema: Schema): Map<string, TablePlan> {
  let found = plans.get(schema);
  if (found) return found;
  found = new Map();
  for (const [name, table] of Object.entries(schema.tables)) {
    const columns = Object.entries(table.columns).map(([column, spec]) => {
      const { type, nullable } = typeof spec === "string" ? { type: spec, nullable: false } : spec;
      return { name: column, type, nullable: nullable === true && !table.primaryKey.includes(column) };
    });
    const byName = new Map(columns.map((column, index) => [column.name, index]));
    found.set(name, { name, columns, byName, key: table.primaryKey.map((column) => byName.get(column)!) });
  }
  plans.set(schema, found);
  return found;
}

/** Schema drift: the upstream sent something the namespace's schema cannot hold. Nothing is applied. */
export function schemaDrift(message: string): EngineError {
  return new EngineError("schema_drift", `schema drift: ${message}`);
}

/**
 * A value a column cannot hold (NaN where a number goes, null in a column that is not nullable):
 * the row is quarantined, not the namespace stopped. Drift is about the shape (a column or table
 * the schema lacks), which every later row would repeat.
 */
class UnfitValue extends Error {}

/** A value of `column` as the contract sends it, in the form SQLite stores it. */
function storedValue(table: TablePlan, column: ColumnPlan, value: unknown): StoredValue {
  const where = `${table.name}.${column.name}`;
  if (value === null || value === undefined) {
    if (column.nullable) return null;
    // A json column that is not nullable holds no SQL NULL: a null there is the JSON value null.
    if (value === null && column.type === "json") return "null";
    if (value === undefined) throw schemaDrift(`${where} is not nullable, and the upstream sent no value`);
    throw new UnfitValue(`${where} is not nullable, and the upstream sent null`);
  }
  switch (column.type) {
    case "string":
      if (typeof value === "string") return value;
      break;
    case "number":
      if (typeof value === "number" && Number.isFinite(value)) return value;
      break;
    case "integer":
      if (typeof value === "number" && Number.isSafeInteger(value)) return value;
      if (typeof value === "string" && DECIMAL_INTEGER.test(value)) {
        const big = BigInt(value);
        if (big >= INT64_MIN && big <= INT64_MAX) return value;
      }
      break;
    case "boolean":
      if (typeof value === "boolean") return value ? 1 : 0;
      break;
    case "json":
      return JSON.stringify(value);
    case "bytes":
      if (typeof value === "string" && BASE64.test(value)) return base64ToHex(value);
      break;
  }
  throw new UnfitValue(`${where} is ${column.type}, and the upstream sent ${describe(value)}`);
}

function describe(value: unknown): string {
  if (Array.isArray(value)) return "an array";
  if (typeof value === "string") return `the string ${JSON.stringify(value.slice(0, 40))}`;
  if (typeof value === "number") return `the number ${value}`;
  return `a value of type ${typeof value}`;
}

function base64ToHex(text: string): string {
  const binary = atob(text);
  let hex = "";
  for (let i = 0; i < binary.length; i++) hex += binary.charCodeAt(i).toString(16).padStart(2, "0");
  return hex;
}

function row(table: TablePlan, data: unknown, what: string): StoredValue[] {
  if (typeof data !== "object" || data === null || Array.isArray(data)) {
    throw schemaDrift(`${what} of ${table.name} is not an object`);
  }
  for (const name of Object.keys(data)) {
    if (!table.byName.has(name)) throw schemaDrift(`${table.name} has no column ${name}`);
  }
  const record = data as Record<string, unknown>;
  return table.columns.map((column) => storedValue(table, column, record[column.name]));
}

function key(table: TablePlan, data: unknown, what: string): StoredValue[] {
  if (typeof data !== "object" || data === null || Array.isArray(data)) {
    throw schemaDrift(`${what} of ${table.name} carries no key`);
  }
  const record = data as Record<string, unknown>;
  for (const name of Object.keys(record)) {
    if (!table.byName.has(name)) throw schemaDrift(`${table.name} has no column ${name}`);
  }
  return table.key.map((index) => {
    const column = table.columns[index]!;
    if (!(column.name in record))
      throw schemaDrift(`${what} of ${table.name} lacks key column ${column.name}`);
    return storedValue(table, column, record[column.name]);
  });
}

/** The key's values of a row, or null when one of them does not fit its column. */
function fitKey(table: TablePlan, data: unknown, what: string): StoredValue[] | null {
  try {
    return key(table, data, what);
  } catch (error) {
    if (error instanceof UnfitValue) return null;
    throw error;
  }
}

/**
 * Checks a batch against the schema and reduces it to one final write per row, in order: a later
 * change of a row wins, an update that moves a row's key deletes the old key, and a TRUNCATE
 * drops every earlier change of its table. Tables the schema does not model are counted and left
 * out. A column the schema lacks, a row without its key, or an unknown operation is schema drift
 * (nothing is applied). A value a column cannot hold (the wrong type, null where the column is
 * not nullable) quarantines its row: the namespace drops the row (a delete of its key) rather
 * than hold a value the upstream does not, and the batch goes on; `quarantined` names each.
 */
export function reduceUpstreamBatch(schema: Schema, changes: readonly UpstreamRowChange[]): ReducedBatch {
  const tables = tablePlans(schema);
  const writes = new Map<
    string,
    { truncate: boolean; rows: Map<string, StoredValue[] | { delete: StoredValue[] }> }
  >();
  let modelled = 0;
  let unmodelled = 0;
  const quarantined: QuarantinedRow[] = [];
  for (const change of changes) {
    const table = tables.get(change.tableName);
    if (!table) {
      unmodelled++;
      continue;
    }
    modelled++;
    let entry = writes.get(table.name);
    if (!entry) {
      entry = { truncate: false, rows: new Map() };
      writes.set(table.name, entry);
    }
    switch (change.op) {
      case "TRUNCATE":
        entry.truncate = true;
        entry.rows.clear();
        break;
      case "INSERT":
      case "UPDATE": {
        let values: StoredValue[] | null = null;
        let newKeyValues: StoredValue[] | null;
        try {
          values = row(table, change.rowData, `the new row`);
          newKeyValues = table.key.map((index) => values![index]!);
        } catch (error) {
          if (!(error instanceof UnfitValue)) throw error;
          quarantined.push({ table: table.name, reason: error.message });
          newKeyValues = fitKey(table, change.rowData, "the new row");
        }
        const newKey = newKeyValues === null ? null : JSON.stringify(newKeyValues);
        if (change.op === "UPDATE" && change.oldData !== null && change.oldData !== undefined) {
          const old = fitKey(table, change.oldData, "the old row");
          const oldKey = old === null ? null : JSON.stringify(old);
          if (old !== null && oldKey !== newKey) {
            entry.rows.delete(oldKey!);
            entry.rows.set(oldKey!, { delete: old });
          }
        }
        if (newKey === null) break;
        // Deleted and set again, so the row's latest change decides its place too.
        entry.rows.delete(newKey);
        entry.rows.set(newKey, values ?? { delete: newKeyValues! });
        break;
      }
      case "DELETE": {
        // A key no column can hold names no row the namespace has.
        const old = fitKey(table, change.oldData, "a delete");
        if (old === null) break;
        const oldKey = JSON.stringify(old);
        entry.rows.delete(oldKey);
        entry.rows.set(oldKey, { delete: old });
        break;
      }
      default:
        throw schemaDrift(
          `unknown operation ${JSON.stringify((change as { op: unknown }).op)} on ${table.name}`,
        );
    }
  }
  const reduced: TableWrites[] = [];
  for (const [table, entry] of writes) {
    const deletes: StoredValue[][] = [];
    const upserts: StoredValue[][] = [];
    for (const write of entry.rows.values()) {
      if (Array.isArray(write)) upserts.push(write);
      else deletes.push(write.delete);
    }
    reduced.push({ table, truncate: entry.truncate, deletes, upserts });
  }
  return { tables: reduced, quarantined, modelled, unmodelled };
}

/**
 * A snapshot page's rows, checked like a batch's new rows, in the schema's column order. A row
 * with a value its column cannot hold is left out and named in `quarantined`, when given.
 */
export function snapshotRows(
  schema: Schema,
  tableName: string,
  rows: readonly unknown[],
  quarantined?: QuarantinedRow[],
): StoredValue[][] {
  const table = tablePlans(schema).get(tableName);
  if (!table) throw schemaDrift(`the snapshot names ${tableName}, which the schema does not model`);
  const fit: StoredValue[][] = [];
  for (const data of rows) {
    try {
      fit.push(row(table, data, "a snapshot row"));
    } catch (error) {
      if (!(error instanceof UnfitValue)) throw error;
      quarantined?.push({ table: tableName, reason: error.message });
    }
  }
  return fit;
}
