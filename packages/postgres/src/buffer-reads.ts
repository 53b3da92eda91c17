import type Database from "better-sqlite3";
import { CHANGE_COLUMNS, type StoredChange } from "./change-buffer-schema.js";

/** The change buffer's reads: a namespace's changes, and what a snapshot could not see. */
export class BufferReads {
  private readAll: Database.Statement | undefined;
  private readTenant: Database.Statement | undefined;

  constructor(private readonly db: Database.Database) {}

  /**
   * The changes after `after` up to the head, in commit order, lazily: every change when
   * `tenant` is undefined, else those routed to `tenant` and the shared ones. SQLite merges the
   * two reads in index order (the route's own watermark and seq keep it from sorting into a
   * temporary tree), so a read stops early without reading the rest. Callers consume it synchronously, so no commit lands in between.
   */
  *read(after: bigint, head: bigint, tenant: string | undefined): Generator<StoredChange> {
    // Prepared once: a namespace reads on every ingest pass, and preparing the tenant's read
    // costs more than running it when little is new.
    this.readAll ??= this.db.prepare(
      `SELECT ${CHANGE_COLUMNS} FROM change WHERE watermark > ? AND watermark <= ? ORDER BY watermark, seq`,
    );
    this.readTenant ??= this.db.prepare(
      `SELECT r.watermark, c.table_name, c.op, c.row_data, c.old_key, c.key_changed, c.new_tenant, c.old_tenant, c.shared, r.seq
         FROM route r JOIN change c ON c.watermark = r.watermark AND c.seq = r.seq
        WHERE r.tenant = @tenant AND r.watermark > @after AND r.watermark <= @head
       UNION ALL
       SELECT ${CHANGE_COLUMNS}, seq FROM change WHERE shared = 1 AND watermark > @after AND watermark <= @head
       ORDER BY 1, 10`,
    );
    const statement = tenant === undefined ? this.readAll : this.readTenant;
    const rows =
      tenant === undefined ? statement.iterate(after, head) : statement.iterate({ tenant, after, head });
    yield* rows as IterableIterator<StoredChange>;
  }

  /**
   * The watermark of the oldest buffered transaction a snapshot could not see: one whose xid
   * the snapshot lists as in progress, or at or past its xmax. xids are 32-bit in pgoutput, so
   * "past xmax" is the half of the xid circle after it.
   */
  oldestInvisible(head: bigint, inProgress: number[], xmax: number): bigint | null {
    const half = xmax + 2 ** 31;
    const [range, params] =
      half < 2 ** 32
        ? ["(xid >= ? AND xid < ?)", [xmax, half]]
        : ["(xid >= ? OR xid < ?)", [xmax, half - 2 ** 32]];
    const row = this.db
      .prepare(
        `SELECT min(watermark) AS watermark FROM tx
          WHERE watermark <= ? AND (${range} OR xid IN (SELECT value FROM json_each(?)))`,
      )
      .get(head, ...params, JSON.stringify(inProgress)) as { watermark: bigint | null };
    return row.watermark;
  }
}
