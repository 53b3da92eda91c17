import type { UpstreamSchema } from "@weir/postgres";

interface WeirSchema {
  tables: Record<string, { columns: Record<string, string>; primaryKey: readonly string[] }>;
}

/**
 * Refuses to start when the PostgreSQL table does not fit the namespace's schema (a column
 * missing, of another type, or a different key), naming each difference: rows of another shape
 * would stop ingest as schema drift on their first change.
 */
export function checkUpstreamSchema(upstream: UpstreamSchema, schema: WeirSchema): void {
  const problems: string[] = [];
  for (const [name, table] of Object.entries(schema.tables)) {
    const followed = upstream.tables[name];
    if (!followed) {
      problems.push(`table ${name} is not followed`);
      continue;
    }
    for (const [column, type] of Object.entries(table.columns)) {
      const found = followed.columns[column];
      if (found !== type)
        problems.push(`${name}.${column}: weir expects ${type}, PostgreSQL gives ${found ?? "nothing"}`);
    }
    for (const column of Object.keys(followed.columns)) {
      if (!(column in table.columns)) problems.push(`${name}.${column}: not in weir's schema`);
    }
    if (followed.primaryKey.join(",") !== table.primaryKey.join(",")) {
      problems.push(
        `${name}: primary key (${followed.primaryKey.join(", ")}), weir expects (${table.primaryKey.join(", ")})`,
      );
    }
  }
  if (problems.length > 0) {
    throw new Error(`the PostgreSQL tables do not fit the todo schema:\n${problems.join("\n")}`);
  }
}
