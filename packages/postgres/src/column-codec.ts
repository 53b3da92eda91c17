import type { ColumnType } from "@weir/protocol";
import postgresArray from "postgres-array";

/** The column types of weir's schema (`@weir/protocol`'s `ColumnType`). */
export type WeirColumnType = ColumnType;

/** A PostgreSQL type as the catalog describes it, domains already resolved to their base type. */
export interface PgType {
  /** The type's name in `pg_catalog` (`int8`, `timestamptz`, `_text` for `text[]`...). */
  name: string;
  /** The schema the type lives in: built-in types are in `pg_catalog`. */
  schema: string;
  /** `pg_type.typtype`: `b` base, `e` enum, `d` domain (resolved before this), `c` composite... */
  kind: string;
  /** For an array type: its element type. */
  element?: PgType;
}

/** How one column's values travel: its weir type, and the decoder of PostgreSQL's text form. */
export interface ColumnCodec {
  weirType: WeirColumnType;
  decode(text: string): unknown;
}

const identity = (text: string): string => text;

function integer(text: string): number | string {
  const value = Number(text);
  // int8 beyond 2^53 keeps its digits as a decimal string, as the contract sends big integers.
  return Number.isSafeInteger(value) ? value : text;
}

function float(text: string): number | string {
  const value = Number(text);
  // JSON has no NaN or infinities: they go as PostgreSQL prints them ("NaN", "Infinity",
  // "-Infinity"), which a namespace's number column does not hold, so it quarantines the row
  // (counted in its status) instead of taking a null PostgreSQL does not have.
  return Number.isFinite(value) ? value : text;
}

function bytes(text: string): string {
  // The session sets bytea_output=hex: `\x` and two hex digits per byte.
  return Buffer.from(text.slice(2), "hex").toString("base64");
}

const TIMESTAMP = /^(\d{4,}-\d\d-\d\d) (\d\d:\d\d:\d\d(?:\.\d+)?)(\+00)?$/;

/**
 * PostgreSQL prints timestamps in the session's DateStyle (ISO) and TimeZone (UTC): this turns
 * `2024-05-01 10:20:30.123456+00` into ISO 8601 `2024-05-01T10:20:30.123456Z`, keeping the
 * microseconds a JavaScript Date would drop. `infinity` and BC dates stay as PostgreSQL prints them.
 */
function timestamp(text: string): string {
  const match = TIMESTAMP.exec(text);
  if (!match) return text;
  return `${match[1]}T${match[2]}${match[3] ? "Z" : ""}`;
}

const SCALARS: Record<string, ColumnCodec> = {
  int2: { weirType: "integer", decode: Number },
  int4: { weirType: "integer", decode: Number },
  int8: { weirType: "integer", decode: integer },
  float4: { weirType: "number", decode: float },
  float8: { weirType: "number", decode: float },
  // Exact: a decimal string never rounds, where a JSON number would past 15 digits.
  numeric: { weirType: "string", decode: identity },
  bool: { weirType: "boolean", decode: (text) => text === "t" },
  text: { weirType: "string", decode: identity },
  varchar: { weirType: "string", decode: identity },
  bpchar: { weirType: "string", decode: identity },
  name: { weirType: "string", decode: identity },
  char: { weirType: "string", decode: identity },
  citext: { weirType: "string", decode: identity },
  uuid: { weirType: "string", decode: identity },
  json: { weirType: "json", decode: (text) => JSON.parse(text) },
  jsonb: { weirType: "json", decode: (text) => JSON.parse(text) },
  bytea: { weirType: "bytes", decode: bytes },
  timestamptz: { weirType: "string", decode: timestamp },
  timestamp: { weirType: "string", decode: timestamp },
  date: { weirType: "string", decode: identity },
  time: { weirType: "string", decode: identity },
  timetz: { weirType: "string", decode: identity },
  interval: { weirType: "string", decode: identity },
  inet: { weirType: "string", decode: identity },
  cidr: { weirType: "string", decode: identity },
  macaddr: { weirType: "string", decode: identity },
  macaddr8: { weirType: "string", decode: identity },
};

const ENUM: ColumnCodec = { weirType: "string", decode: identity };

function scalarCodec(type: PgType): ColumnCodec | null {
  if (type.kind === "e") return ENUM;
  if (type.kind !== "b" || !Object.hasOwn(SCALARS, type.name)) return null;
  // A type of the same name in another schema is not the built-in one (citext is an extension's).
  if (type.schema !== "pg_catalog" && type.name !== "citext") return null;
  return SCALARS[type.name]!;
}

/**
 * The codec of a column of `type`, or null when weir has no faithful mapping for it (the
 * caller refuses such a column at start, naming it). Arrays of a supported scalar (any
 * dimension) are JSON arrays of its values; NULL elements are null.
 */
export function columnCodec(type: PgType): ColumnCodec | null {
  if (type.element) {
    const element = scalarCodec(type.element);
    if (!element) return null;
    const decodeElement = element.decode;
    return { weirType: "json", decode: (text) => postgresArray.parse(text, decodeElement) };
  }
  return scalarCodec(type);
}
