import { EngineError } from "./engine-error.js";
import { schemaText } from "./schema-text.js";
import type { ColumnSchema, ColumnType, Schema, SqlAdapter } from "./types.js";

const TYPES = new Set<string>(["string", "number", "integer", "boolean", "json", "bytes"]);

/**
 * Reads back the engine's compact schema form (see `schemaText`): the inverse, so that
 * `schemaText(parseSchemaText(text)) === text` and installing the result changes nothing.
 */
export function parseSchemaText(text: string): Schema {
  const bad = (why: string) => new EngineError("internal", `the stored schema is unreadable: ${why}`);
  const tables: Schema["tables"] = {};
  for (const part of text.split(";")) {
    const [name, key, columnList, ...rest] = part.split("|");
    if (!name || !key || !columnList || rest.length > 0) throw bad(`table "${part.slice(0, 80)}"`);
    const columns: Record<string, ColumnType | ColumnSchema> = {};
    for (const spec of columnList.split(",")) {
      const [column, type, nullable] = spec.split(":");
      if (!column || !type || !TYPES.has(type) || (nullable !== "0" && nullable !== "1"))
        throw bad(`column "${spec.slice(0, 80)}"`);
      columns[column] =
        nullable === "1" ? { type: type as ColumnType, nullable: true } : (type as ColumnType);
    }
    tables[name] = { columns, primaryKey: key.split(",") };
  }
  const schema = { tables };
  if (schemaText(schema) !== text) throw bad("it does not read back the same");
  return schema;
}

/**
 * The schema the engine installed in this database (it keeps it beside its floor), or null when
 * the database holds no engine state yet. A host that opens a namespace without the app's config
 * (a command-line tool) works on this schema.
 */
export function storedSchema(db: SqlAdapter): Schema | null {
  const hasState = db.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '_weir_state'", []);
  if (hasState.length === 0) return null;
  const rows = db.query("SELECT schema FROM _weir_state WHERE id = 1", []);
  const text = rows[0]?.[0];
  return typeof text === "string" ? parseSchemaText(text) : null;
}
