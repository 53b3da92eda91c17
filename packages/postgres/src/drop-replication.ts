import pg from "pg";
import { quoteIdentifier as quote } from "./quote-identifier.js";

export interface DropReplicationOptions {
  databaseUrl: string;
  slot?: string;
  publication?: string;
  /**
   * How long to wait for a slot in use to be released (default 5,000 ms): PostgreSQL lets go of
   * a slot a moment after its reader disconnects.
   */
  waitMs?: number;
}

const POLL_MS = 50;

/**
 * Drops the slot and the publication (`weir` and `weir` unless named). A slot holds WAL on the
 * server until it is dropped, so this is the one way weir lets go of it; it refuses a slot a
 * reader is still using once `waitMs` has passed. Answers what it dropped.
 */
export async function dropReplication(
  options: DropReplicationOptions,
): Promise<{ slot: boolean; publication: boolean }> {
  const slot = options.slot ?? "weir";
  const publication = options.publication ?? "weir";
  const client = new pg.Client({ connectionString: options.databaseUrl });
  await client.connect();
  try {
    const deadline = Date.now() + (options.waitMs ?? 5_000);
    const read = () =>
      client.query<{ active_pid: number | null }>(
        "SELECT active_pid FROM pg_replication_slots WHERE slot_name = $1",
        [slot],
      );
    let { rows } = await read();
    while (rows[0]?.active_pid && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      ({ rows } = await read());
    }
    if (rows[0]?.active_pid) {
      throw new Error(`slot ${slot} is in use by process ${rows[0].active_pid}: stop its reader first`);
    }
    if (rows.length > 0) await client.query("SELECT pg_drop_replication_slot($1)", [slot]);
    const dropped = await client.query("SELECT 1 FROM pg_publication WHERE pubname = $1", [publication]);
    if (dropped.rowCount) await client.query(`DROP PUBLICATION ${quote(publication)}`);
    return { slot: rows.length > 0, publication: Boolean(dropped.rowCount) };
  } finally {
    await client.end();
  }
}
