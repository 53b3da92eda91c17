import type Database from "better-sqlite3";
import type { BufferedChange } from "./change-buffer-schema.js";
import type { UnservableTenants } from "./unservable-tenants.js";

/** Writes row changes to the buffer, each with its route to the tenants it concerns. */
export class BufferWrites {
  /** Counts the changes whose tenant no namespace can serve, as they are written. */
  tenants: UnservableTenants | null = null;
  private readonly insertChange: Database.Statement;
  private readonly insertRoute: Database.Statement;

  constructor(private readonly db: Database.Database) {
    this.insertChange = this.db.prepare(
      `INSERT OR REPLACE INTO change (watermark, seq, table_name, op, row_data, old_key, key_changed, new_tenant, old_tenant, shared)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.insertRoute = this.db.prepare(
      "INSERT OR IGNORE INTO route (tenant, watermark, seq) VALUES (?, ?, ?)",
    );
  }

  /** Writes `changes` under `watermark`, numbered from `firstSeq` (inside the caller's transaction). */
  writeChanges(watermark: bigint, firstSeq: number, changes: BufferedChange[]): void {
    let seq = firstSeq;
    for (const change of changes) {
      this.insertChange.run(
        watermark,
        seq,
        change.tableName,
        change.op,
        change.rowJson,
        change.oldKeyJson,
        change.keyChanged ? 1 : 0,
        change.newTenant,
        change.oldTenant,
        change.shared ? 1 : 0,
      );
      if (change.newTenant !== null) this.insertRoute.run(change.newTenant, watermark, seq);
      this.tenants?.note(change.newTenant);
      if (change.oldTenant !== null && change.oldTenant !== change.newTenant) {
        this.insertRoute.run(change.oldTenant, watermark, seq);
      }
      seq++;
    }
  }
}
