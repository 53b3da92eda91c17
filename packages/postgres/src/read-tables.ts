import type pg from "pg";
import { type ColumnCodec, columnCodec } from "./column-codec.js";
import { quoteIdentifier as quote } from "./quote-identifier.js";
import { readTypes } from "./read-types.js";
import type { TableOptions } from "./upstream-options.js";

interface ColumnPlan {
  name: string;
  typeOid: number;
  /** As PostgreSQL writes it (`character varying(20)`), for messages. */
  typeName: string;
  /** Its attnum: a column dropped and added again under its name has another. */
  position: number;
  codec: ColumnCodec;
  /** No NOT NULL constraint upstream: weir's column is declared nullable too. */
  nullable: boolean;
}

/** What the reader and the snapshots know of one configured table, read from the catalog at start. */
export interface TablePlan {
  name: string;
  schema: string;
  oid: number;
  /** The columns sent, in the table's order. */
  columns: ColumnPlan[];
  primaryKey: string[];
  tenantColumn: string | null;
  /** Whether every column is sent (then a column added upstream is drift). */
  allColumns: boolean;
  /** Every column the table had at start, with its type oid (what a Relation message must match). */
  tableColumns: Map<string, number>;
}

interface ClassRow {
  oid: number;
  relname: string;
  relreplident: string;
  relkind: string;
}
interface AttributeRow {
  attrelid: number;
  attname: string;
  attnum: number;
  atttypid: number;
  type_name: string;
  attgenerated: string;
  attnotnull: boolean;
}

/**
 * Reads the configured tables from the catalog and checks that weir can follow each one: it
 * exists, has a primary key, every sent column has a supported type and is no generated column
 * (pgoutput does not send those), the tenant column exists, and the replica identity is FULL
 * (so that an update or delete carries the old row's tenant and unchanged large values).
 * Throws one error listing every problem, each naming its table and column.
 */
export async function readTables(
  client: pg.ClientBase,
  schema: string,
  tables: Map<string, TableOptions>,
  setReplicaIdentity: boolean,
): Promise<TablePlan[]> {
  const names = [...tables.keys()];
  const { rows: classes } = await client.query<ClassRow>(
    `SELECT c.oid::int AS oid, c.relname, c.relreplident, c.relkind
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND c.relname = ANY($2::text[])`,
    [schema, names],
  );
  const oids = classes.map((row) => row.oid);
  const { rows: attributes } = await client.query<AttributeRow>(
    `SELECT a.attrelid::int AS attrelid, a.attname, a.attnum::int AS attnum, a.atttypid::int AS atttypid,
            format_type(a.atttypid, a.atttypmod) AS type_name, a.attgenerated, a.attnotnull
       FROM pg_attribute a
      WHERE a.attrelid = ANY($1::oid[]) AND a.attnum > 0 AND NOT a.attisdropped
      ORDER BY a.attrelid, a.attnum`,
    [oids],
  );
  const { rows: keys } = await client.query<{ indrelid: number; attname: string }>(
    `SELECT i.indrelid::int AS indrelid, a.attname
       FROM pg_index i
       CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord)
       JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
      WHERE i.indrelid = ANY($1::oid[]) AND i.indisprimary
      ORDER BY i.indrelid, k.ord`,
    [oids],
  );
  const types = await readTypes(
    client,
    attributes.map((row) => row.atttypid),
  );

  const problems: string[] = [];
  const plans: TablePlan[] = [];
  for (const [name, options] of tables) {
    const table = classes.find((row) => row.relname === name);
    if (!table) {
      problems.push(`table ${schema}.${name} does not exist`);
      continue;
    }
    if (table.relkind !== "r") {
      problems.push(`${schema}.${name} is not a plain table (relkind ${table.relkind})`);
      continue;
    }
    const columns = attributes.filter((row) => row.attrelid === table.oid);
    const primaryKey = keys.filter((row) => row.indrelid === table.oid).map((row) => row.attname);
    if (primaryKey.length === 0)
      problems.push(`table ${name} has no primary key: weir identifies rows by it`);
    const wanted =
      options.columns ?? columns.filter((row) => row.attgenerated === "").map((row) => row.attname);
    for (const key of primaryKey) {
      if (!wanted.includes(key))
        problems.push(`table ${name}: the column list must include primary key column ${key}`);
    }
    const tenantColumn = options.tenantColumn ?? null;
    if (tenantColumn !== null && !columns.some((row) => row.attname === tenantColumn)) {
      problems.push(`table ${name} has no tenant column ${tenantColumn}`);
    }
    const plan: ColumnPlan[] = [];
    for (const row of columns) {
      if (!wanted.includes(row.attname)) continue;
      if (row.attgenerated !== "") {
        problems.push(`column ${name}.${row.attname} is generated: logical replication does not send it`);
        continue;
      }
      const codec = columnCodec(types.get(row.atttypid)!);
      if (!codec) {
        problems.push(`column ${name}.${row.attname} has type ${row.type_name}, which weir does not support`);
        continue;
      }
      plan.push({
        name: row.attname,
        typeOid: row.atttypid,
        typeName: row.type_name,
        position: row.attnum,
        codec,
        nullable: !row.attnotnull && !primaryKey.includes(row.attname),
      });
    }
    for (const column of wanted) {
      if (!columns.some((row) => row.attname === column))
        problems.push(`table ${name} has no column ${column}`);
    }
    if (table.relreplident !== "f") {
      if (setReplicaIdentity) {
        await client.query(`ALTER TABLE ${quote(schema)}.${quote(name)} REPLICA IDENTITY FULL`);
      } else {
        problems.push(
          `table ${name} needs REPLICA IDENTITY FULL (so updates and deletes carry the old row): run ALTER TABLE ${quote(schema)}.${quote(name)} REPLICA IDENTITY FULL, or pass setReplicaIdentity: true`,
        );
      }
    }
    plans.push({
      name,
      schema,
      oid: table.oid,
      columns: plan,
      primaryKey,
      tenantColumn,
      allColumns: options.columns === undefined,
      tableColumns: new Map(columns.map((row) => [row.attname, row.atttypid])),
    });
  }
  if (problems.length > 0) throw new Error(`cannot follow these tables: ${problems.join("; ")}`);
  return plans;
}
