import type { ColumnType, Schema, SqlValue } from "@weir/engine-wasm";
import { MutatorError } from "./mutator-error.js";

export interface ColumnInfo {
  type: ColumnType;
  nullable: boolean;
}

export interface TableInfo {
  name: string;
  columns: Map<string, ColumnInfo>;
  primaryKey: readonly string[];
  /** The columns a new row must have (the key and every column not nullable). */
  required: readonly string[];
}

/** The schema as lookups, built once at start. */
export function tableInfos(schema: Schema): Map<string, TableInfo> {
  const tables = new Map<string, TableInfo>();
  for (const [name, table] of Object.entries(schema.tables)) {
    const columns = new Map<string, ColumnInfo>();
    for (const [column, declared] of Object.entries(table.columns)) {
      const info = typeof declared === "string" ? { type: declared, nullable: false } : declared;
      const isKey = table.primaryKey.includes(column);
      columns.set(column, { type: info.type, nullable: !isKey && info.nullable === true });
    }
    const required = [...columns].filter(([, column]) => !column.nullable).map(([column]) => column);
    tables.set(name, { name, columns, primaryKey: table.primaryKey, required });
  }
  return tables;
}

const HEX = /^(?:[0-9a-f]{2})*$/;
const DECIMAL_INTEGER = /^-?(0|[1-9][0-9]{0,18})$/;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** A value as a mutator gives it, in the form the column stores. Wrong types are application errors. */
export function encodeValue(table: string, column: string, info: ColumnInfo, value: unknown): SqlValue {
  const where = `${table}.${column}`;
  if (value === null || value === undefined) {
    if (info.nullable) return null;
    throw new MutatorError(`${where} is not nullable`);
  }
  switch (info.type) {
    case "string":
      if (typeof value === "string") return value;
      break;
    case "number":
      if (typeof value === "number" && Number.isFinite(value)) return value;
      break;
    case "integer":
      if (typeof value === "number" && Number.isSafeInteger(value)) return value;
      if (typeof value === "bigint") return value;
      // The wire form of an integer beyond 2^53 (what a client pulled): written back exactly.
      if (typeof value === "string" && DECIMAL_INTEGER.test(value)) {
        const big = BigInt(value);
        if (big >= INT64_MIN && big <= INT64_MAX) return big;
      }
      break;
    case "boolean":
      if (typeof value === "boolean") return value ? 1 : 0;
      break;
    case "json":
      return JSON.stringify(value);
    case "bytes":
      if (value instanceof Uint8Array) return value;
      if (typeof value === "string" && HEX.test(value)) return hexToBytes(value);
      throw new MutatorError(`${where} expects bytes as a lowercase hex string`);
  }
  throw new MutatorError(`${where} expects a ${info.type}, got ${describe(value)}`);
}

/** A stored value in its wire form: booleans as true/false, JSON parsed, bytes as lowercase hex. */
export function decodeValue(info: ColumnInfo, value: SqlValue): unknown {
  if (value === null) return null;
  switch (info.type) {
    case "integer":
      // Beyond 2^53 a stored integer is read as its decimal text (see mutator-tx's `get`).
      if (typeof value === "string") return BigInt(value);
      if (typeof value === "bigint" && Number.isSafeInteger(Number(value))) return Number(value);
      return value;
    case "boolean":
      return value === 1 || value === 1n;
    case "json":
      return typeof value === "string" ? JSON.parse(value) : value;
    case "bytes":
      return value instanceof Uint8Array ? bytesToHex(value) : value;
    default:
      return value;
  }
}

function describe(value: unknown): string {
  if (typeof value === "number" && !Number.isFinite(value)) return String(value);
  if (typeof value === "number" && !Number.isInteger(value)) return `the fraction ${value}`;
  return Array.isArray(value) ? "an array" : typeof value;
}

function hexToBytes(hex: string): Uint8Array {
  const bytes = new Uint8Array(hex.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return bytes;
}

function bytesToHex(bytes: Uint8Array): string {
  let hex = "";
  for (const byte of bytes) hex += byte.toString(16).padStart(2, "0");
  return hex;
}
