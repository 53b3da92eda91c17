import * as v from "valibot";

/**
 * How a column is stored and how it travels. `boolean` is stored as 0/1 and pulls as
 * `true`/`false`; `json` is stored as JSON text and pulls as the value; `bytes` is stored as a
 * BLOB and travels as a lowercase hex string.
 */
export type ColumnType = "string" | "number" | "integer" | "boolean" | "json" | "bytes";

export interface ColumnSchema {
  type: ColumnType;
  /** Columns are NOT NULL unless declared nullable. Primary-key columns are never nullable. */
  nullable?: boolean;
}

export interface TableSchema {
  columns: Record<string, ColumnType | ColumnSchema>;
  /** One or more column names. */
  primaryKey: readonly string[];
}

/** The tables a namespace syncs. Names match `[A-Za-z_][A-Za-z0-9_]*` and must not start with `_weir`. */
export interface Schema {
  tables: Record<string, TableSchema>;
}

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
const TableShape = v.strictObject({
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

function column(spec: ColumnType | ColumnSchema): ColumnSchema {
  return typeof spec === "string" ? { type: spec } : spec;
}

/**
 * Every problem of a declared schema, as "<path>: <message>" lines (none when it is usable): the
 * one set of schema rules, which hosts use to check a config at start.
 */
export function schemaProblems(schema: unknown): string[] {
  const issues = (result: v.SafeParseResult<v.GenericSchema>, prefix: string) =>
    result.success
      ? []
      : result.issues.map((issue) => {
          const path = issue.path?.map((item) => String(item.key)).join(".");
          return `${prefix}${path ? `.${path}` : ""}: ${issue.message}`;
        });
  const shape = v.safeParse(v.strictObject({ tables: v.record(v.string(), v.unknown()) }), schema);
  if (!shape.success) return issues(shape, "schema");
  const tables = shape.output.tables;
  const problems: string[] = [];
  if (Object.keys(tables).length === 0) problems.push("schema.tables: the schema needs at least one table");
  for (const [name, value] of Object.entries(tables)) {
    const where = `schema.tables.${name}`;
    const named = v.safeParse(Name, name);
    if (!named.success) problems.push(`${where}: ${named.issues[0].message}`);
    const parsed = v.safeParse(TableShape, value);
    if (!parsed.success) {
      problems.push(...issues(parsed, where));
      continue;
    }
    const table = parsed.output;
    for (const key of table.primaryKey) {
      const spec = table.columns[key];
      if (!spec) {
        problems.push(`${where}: every primary key column must be a declared column (${key} is not)`);
        continue;
      }
      const { type, nullable } = column(spec);
      if (!KEY_TYPES.includes(type) || nullable) {
        problems.push(`${where}.primaryKey: ${key} must be a non-nullable string or integer`);
      }
    }
    if (new Set(table.primaryKey).size !== table.primaryKey.length) {
      problems.push(`${where}.primaryKey: names a column twice`);
    }
  }
  return problems;
}
