import { type ColumnSchema, type ColumnType, type Schema, schemaProblems } from "@weir/protocol";
import { EngineError } from "./engine-error.js";

export { schemaProblems };

function column(spec: ColumnType | ColumnSchema): ColumnSchema {
  return typeof spec === "string" ? { type: spec } : spec;
}

/**
 * Checks a declared schema (a `bad_request` naming its first problem) and writes it in the
 * engine's compact form: "<table>|<pk1>,<pk2>|<col>:<type>:<nullable 0|1>,...;<table>|...".
 */
export function schemaText(schema: Schema): string {
  const problems = schemaProblems(schema);
  if (problems.length > 0) throw new EngineError("bad_request", `invalid ${problems[0]}`);
  const tables: string[] = [];
  for (const [name, table] of Object.entries(schema.tables)) {
    const columns = Object.entries(table.columns).map(([columnName, spec]) => {
      const { type, nullable } = column(spec);
      return `${columnName}:${type}:${nullable ? 1 : 0}`;
    });
    tables.push(`${name}|${table.primaryKey.join(",")}|${columns.join(",")}`);
  }
  return tables.join(";");
}
