import pg from "pg";
import { columnCodec, type WeirColumnType } from "./column-codec.js";
import { readTypes } from "./read-types.js";
import { SESSION_OPTIONS } from "./session-options.js";

/** One column of a table as weir would follow it. */
export interface ListedColumn {
  name: string;
  /** As PostgreSQL writes it (`character varying(20)`). */
  type: string;
  /** The weir type its values take, or null for a type weir cannot carry (leave it out). */
  weirType: WeirColumnType | null;
  nullable: boolean;
  primaryKey: boolean;
  /** Generated columns are not sent by logical replication. */
  generated: boolean;
}

export interface ListColumnsOptions {
  databaseUrl: string;
  /** Default `public`. */
  schema?: string;
  /** Only these tables (default: every plain table of the schema). */
  tables?: string[];
}

interface ColumnRow {
  relname: string;
  attname: string;
  atttypid: number;
  type_name: string;
  attnotnull: boolean;
  attgenerated: string;
  is_key: boolean;
}

/**
 * The columns of each table (in the table's order) with the weir type `postgresUpstream` would
 * give them, read from the catalog: what a namespace's schema would declare, before following
 * the tables, or after a schema change to see what changed.
 */
export async function listColumns(options: ListColumnsOptions): Promise<Record<string, ListedColumn[]>> {
  const client = new pg.Client({ connectionString: options.databaseUrl, options: SESSION_OPTIONS });
  await client.connect();
  try {
    const { rows } = await client.query<ColumnRow>(
      `SELECT c.relname, a.attname, a.atttypid::int AS atttypid,
              format_type(a.atttypid, a.atttypmod) AS type_name, a.attnotnull, a.attgenerated,
              EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = c.oid AND i.indisprimary
                        AND a.attnum = ANY(i.indkey)) AS is_key
         FROM pg_class c
         JOIN pg_namespace n ON n.oid = c.relnamespace
         JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
        WHERE n.nspname = $1 AND c.relkind = 'r' AND ($2::text[] IS NULL OR c.relname = ANY($2::text[]))
        ORDER BY c.relname, a.attnum`,
      [options.schema ?? "public", options.tables ?? null],
    );
    const types = await readTypes(
      client,
      rows.map((row) => row.atttypid),
    );
    const tables: Record<string, ListedColumn[]> = {};
    for (const row of rows) {
      tables[row.relname] ??= [];
      tables[row.relname]!.push({
        name: row.attname,
        type: row.type_name,
        weirType: columnCodec(types.get(row.atttypid)!)?.weirType ?? null,
        nullable: !row.attnotnull && !row.is_key,
        primaryKey: row.is_key,
        generated: row.attgenerated !== "",
      });
    }
    return tables;
  } finally {
    await client.end();
  }
}
