import type pg from "pg";
import { quoteIdentifier as quote } from "./quote-identifier.js";

/**
 * Checks that the server and the role can serve logical replication, and names the fix when
 * they cannot: a server with wal_level below logical, a role without REPLICATION.
 */
export async function checkReplicationSupport(client: pg.ClientBase): Promise<void> {
  const { rows: walLevel } = await client.query<{ wal_level: string }>("SHOW wal_level");
  if (walLevel[0]?.wal_level !== "logical") {
    throw new Error(
      `wal_level is ${walLevel[0]?.wal_level} on this server; logical replication needs wal_level=logical: run ALTER SYSTEM SET wal_level = logical and restart PostgreSQL`,
    );
  }
  const { rows: role } = await client.query<{ rolname: string; rolreplication: boolean; rolsuper: boolean }>(
    "SELECT rolname, rolreplication, rolsuper FROM pg_roles WHERE rolname = current_user",
  );
  if (!role[0]?.rolreplication && !role[0]?.rolsuper) {
    const name = role[0]?.rolname ?? "current_user";
    throw new Error(
      `role ${name} lacks the REPLICATION attribute, which a replication slot needs: run ALTER ROLE ${quote(name)} REPLICATION as a superuser`,
    );
  }
}
