import type pg from "pg";

/**
 * The app's own table, the system of record: the todo example's `todo` table in PostgreSQL.
 * Its columns map to the example's weir schema (`text` to string, `boolean` to boolean,
 * `double precision` to number); NOT NULL, because the weir schema's columns are.
 * `REPLICA IDENTITY FULL` makes PostgreSQL log the whole old row of an update or delete, which
 * logical replication needs to tell weir what an update replaced.
 */
export async function ensureTodoTable(pool: pg.Pool): Promise<void> {
  await pool.query(`
    CREATE TABLE IF NOT EXISTS todo (
      id text PRIMARY KEY,
      owner text NOT NULL,
      text text NOT NULL,
      done boolean NOT NULL DEFAULT false,
      sort double precision NOT NULL
    );
    CREATE INDEX IF NOT EXISTS todo_owner ON todo (owner);
  `);
  const identity = await pool.query<{ relreplident: string }>(
    "SELECT relreplident FROM pg_class WHERE oid = 'todo'::regclass",
  );
  // Only when needed: the ALTER takes the table's strongest lock.
  if (identity.rows[0]?.relreplident !== "f") await pool.query("ALTER TABLE todo REPLICA IDENTITY FULL");
}
