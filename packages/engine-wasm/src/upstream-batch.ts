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

export interface ReducedBatch {
  tables: TableWrites[];
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

/** A value of `column` as the contract sends it, in the form SQLite stores it. */
function storedValue(table: TablePlan, column: ColumnPlan, value: unknown): StoredValue {
  const where = `${table.name}.${column.name}`;
  if (value === null || value === undefined) {
    if (column.nullable) return null;
    throw schemaDrift(
      `${where} is not nullable, and the upstream sent ${value === null ? "null" : "no value"}`,
    );
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
  throw schemaDrift(`${where} is ${column.type}, and the upstream sent ${describe(value)}`);
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

/**
 * Checks a batch against the schema (an unknown column or a value of the wrong type is schema
 * drift) and reduces it to one final write per row, in order: a later change of a row wins, an
 * update that moves a row's key deletes the old key, and a TRUNCATE drops every earlier change
 * of its table. Tables the schema does not model are counted and left out.
 */
export function reduceUpstreamBatch(schema: Schema, changes: readonly UpstreamRowChange[]): ReducedBatch {
  const tables = tablePlans(schema);
  const writes = new Map<
    string,
    { truncate: boolean; rows: Map<string, StoredValue[] | { delete: StoredValue[] }> }
  >();
  let modelled = 0;
  let unmodelled = 0;
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
        const values = row(table, change.rowData, `the new row`);
        const newKey = JSON.stringify(table.key.map((index) => values[index]));
        if (change.op === "UPDATE" && change.oldData !== null && change.oldData !== undefined) {
          const old = key(table, change.oldData, "the old row");
          const oldKey = JSON.stringify(old);
          if (oldKey !== newKey) {
            entry.rows.delete(oldKey);
            entry.rows.set(oldKey, { delete: old });
          }
        }
        // Deleted and set again, so the row's latest change decides its place too.
        entry.rows.delete(newKey);
        entry.rows.set(newKey, values);
        break;
      }
      case "DELETE": {
        const old = key(table, change.oldData, "a delete");
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
  return { tables: reduced, modelled, unmodelled };
}

/** A snapshot page's rows, checked like a batch's new rows, in the schema's column order. */
export function snapshotRows(schema: Schema, tableName: string, rows: readonly unknown[]): StoredValue[][] {
  const table = tablePlans(schema).get(tableName);
  if (!table) throw schemaDrift(`the snapshot names ${tableName}, which the schema does not model`);
  return rows.map((data) => row(table, data, "a snapshot row"));
}
