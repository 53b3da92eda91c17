import type pg from "pg";
import { parseLsn } from "./lsn.js";
import { quoteIdentifier as quote } from "./quote-identifier.js";

export interface ReplicationSetup {
  /** The slot's confirmed position: PostgreSQL sends every commit from there on. */
  slotPosition: bigint;
  createdSlot: boolean;
  createdPublication: boolean;
}

/**
 * Creates the publication and the slot when they are absent, and checks those that exist. It never alters or drops an
 * existing one: that takes `dropReplication` (or `weir upstream postgres --drop`).
 */
export async function ensureReplication(
  client: pg.ClientBase,
  options: { slot: string; publication: string; schema: string; tables: string[] },
): Promise<ReplicationSetup> {
  const { slot, publication, schema, tables } = options;
  const { rows: publications } = await client.query<{
    pubinsert: boolean;
    pubupdate: boolean;
    pubdelete: boolean;
    pubtruncate: boolean;
  }>("SELECT pubinsert, pubupdate, pubdelete, pubtruncate FROM pg_publication WHERE pubname = $1", [
    publication,
  ]);
  let createdPublication = false;
  if (publications.length === 0) {
    const list = tables.map((table) => `${quote(schema)}.${quote(table)}`).join(", ");
    await client.query(`CREATE PUBLICATION ${quote(publication)} FOR TABLE ${list}`);
    createdPublication = true;
  } else {
    const actions = publications[0]!;
    if (!actions.pubinsert || !actions.pubupdate || !actions.pubdelete || !actions.pubtruncate) {
      throw new Error(
        `publication ${publication} does not publish every insert, update, delete and truncate: run ALTER PUBLICATION ${quote(publication)} SET (publish = 'insert, update, delete, truncate')`,
      );
    }
    const { rows: published } = await client.query<{ tablename: string }>(
      "SELECT tablename FROM pg_publication_tables WHERE pubname = $1 AND schemaname = $2",
      [publication, schema],
    );
    const missing = tables.filter((table) => !published.some((row) => row.tablename === table));
    if (missing.length > 0) {
      throw new Error(
        `publication ${publication} lacks ${missing.join(", ")}: run ALTER PUBLICATION ${quote(publication)} ADD TABLE ${missing.map((t) => `${quote(schema)}.${quote(t)}`).join(", ")}`,
      );
    }
  }

  const { rows: slots } = await client.query<{
    plugin: string;
    database: string;
    confirmed_flush_lsn: string | null;
  }>("SELECT plugin, database, confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = $1", [
    slot,
  ]);
  if (slots.length === 0) {
    const { rows } = await client.query<{ lsn: string }>(
      "SELECT lsn::text FROM pg_create_logical_replication_slot($1, 'pgoutput')",
      [slot],
    );
    return { slotPosition: parseLsn(rows[0]!.lsn), createdSlot: true, createdPublication };
  }
  const existing = slots[0]!;
  const { rows: database } = await client.query<{ name: string }>("SELECT current_database() AS name");
  if (existing.plugin !== "pgoutput" || existing.database !== database[0]!.name) {
    throw new Error(
      `slot ${slot} exists for plugin ${existing.plugin} on database ${existing.database}; weir needs a pgoutput slot on ${database[0]!.name}: choose another slot name`,
    );
  }
  return {
    slotPosition: existing.confirmed_flush_lsn ? parseLsn(existing.confirmed_flush_lsn) : 0n,
    createdSlot: false,
    createdPublication,
  };
}
