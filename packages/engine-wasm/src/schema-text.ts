import * as v from "valibot";
import { EngineError } from "./engine-error.js";
import type { ColumnSchema, ColumnType, Schema } from "./types.js";

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;
const RESERVED = /^(_weir|sqlite_)/i;
// json_object takes at most 127 arguments, two per column.
const MAX_COLUMNS = 60;
const KEY_TYPES: readonly ColumnType[] = ["string", "integer"];

const Name = v.pipe(
  v.string(),
  v.regex(IDENTIFIER, "must be a plain identifier: a letter or _, then letters, digits or _"),
  v.check((name) => !RESERVED.test(name), "must not start with _weir or sqlite_ (reserved)"),
);
const Type = v.picklist(["string", "number", "integer", "boolean", "json", "bytes"]);
const Column = v.union([Type, v.strictObject({ type: Type, nullable: v.optional(v.boolean()) })]);
const TableSchema = v.strictObject({
  columns: v.pipe(
    v.record(Name, Column),
    v.check((columns) => Object.keys(columns).length > 0, "a table needs at least one column"),
    v.check(
      (columns) => Object.keys(columns).length <= MAX_COLUMNS,
      `a table has at most ${MAX_COLUMNS} columns`,
    ),
  ),
  primaryKey: v.pipe(v.array(Name), v.minLength(1, "a table needs a primary key")),
});
const SchemaShape = v.strictObject({ tables: v.record(Name, TableSchema) });

function column(spec: ColumnType | ColumnSchema): ColumnSchema {
  return typeof spec === "string" ? { type: spec } : spec;
}

/**
 * Checks a declared schema and writes it in the engine's compact form:
 * "<table>|<pk1>,<pk2>|<col>:<type>:<nullable 0|1>,...;<table>|...".
 */
export function schemaText(schema: Schema): string {
  const result = v.safeParse(SchemaShape, schema);
  if (!result.success) {
    const issue = result.issues[0];
    const path = issue.path?.map((item) => String(item.key)).join(".") ?? "schema";
    throw new EngineError("bad_request", `invalid schema at ${path}: ${issue.message}`);
  }
  const tables: string[] = [];
  for (const [name, table] of Object.entries(schema.tables)) {
    for (const key of table.primaryKey) {
      const spec = table.columns[key];
      if (!spec) throw new EngineError("bad_request", `primary key ${name}.${key} is not a column`);
      const { type, nullable } = column(spec);
      if (!KEY_TYPES.includes(type) || nullable) {
        throw new EngineError(
          "bad_request",
          `primary key ${name}.${key} must be a non-nullable string or integer`,
        );
      }
    }
    if (new Set(table.primaryKey).size !== table.primaryKey.length) {
      throw new EngineError("bad_request", `primary key of ${name} names a column twice`);
    }
    const columns = Object.entries(table.columns).map(([columnName, spec]) => {
      const { type, nullable } = column(spec);
      return `${columnName}:${type}:${nullable ? 1 : 0}`;
    });
    tables.push(`${name}|${table.primaryKey.join(",")}|${columns.join(",")}`);
  }
  return tables.join(";");
}
