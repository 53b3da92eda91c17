import type pg from "pg";

/**
 * Refuses a server that cannot serve logical replication before the app creates anything in it,
 * naming the fix. `@weir/postgres` checks this (and the role's REPLICATION) again at start.
 */
export async function requireLogicalWal(pool: pg.Pool): Promise<void> {
  const { rows } = await pool.query<{ wal_level: string }>("SHOW wal_level");
  const level = rows[0]?.wal_level;
  if (level !== "logical") {
    throw new Error(
      `wal_level is ${level} on this server; weir follows it by logical replication, which needs wal_level=logical: run ALTER SYSTEM SET wal_level = logical and restart PostgreSQL`,
    );
  }
}
