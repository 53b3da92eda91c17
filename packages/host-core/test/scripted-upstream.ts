// An upstream in process for host-core's ingest tests: one table "item" (id, n) and its change
// log, a watermark per transaction, and failures to answer with on demand.
import type { UpstreamChange } from "@weir/protocol";
import { type UpstreamCallError, UpstreamGoneError, type UpstreamSource } from "@weir/protocol";

/**
 * An in-process upstream: a table and its change log, with transactions as watermarks, and
 * failures to answer with on demand.
 */
export class ScriptedUpstream implements UpstreamSource {
  rows = new Map<string, { id: string; n: number }>();
  log: UpstreamChange[] = [];
  watermark = 0;
  oldest = 0;
  failures: UpstreamCallError[] = [];
  snapshotLimits: number[] = [];

  commit(writes: Array<{ id: string; n?: number }>): void {
    this.watermark++;
    for (const { id, n } of writes) {
      const had = this.rows.has(id);
      if (n === undefined) {
        this.rows.delete(id);
        this.log.push({
          watermark: BigInt(this.watermark),
          tableName: "item",
          op: "DELETE",
          rowData: null,
          oldData: { id },
        });
      } else {
        this.rows.set(id, { id, n });
        this.log.push({
          watermark: BigInt(this.watermark),
          tableName: "item",
          op: had ? "UPDATE" : "INSERT",
          rowData: { id, n },
          oldData: null,
        });
      }
    }
  }

  private fail(): void {
    const failure = this.failures.shift();
    if (failure) throw failure;
  }

  async changes(after: bigint, limit: number) {
    this.fail();
    if (Number(after) < this.oldest) throw new UpstreamGoneError(BigInt(this.oldest));
    const pending = this.log.filter((change) => change.watermark > after);
    const page = pending.slice(0, limit);
    const last = page.at(-1)?.watermark;
    const whole = last === undefined ? [] : pending.filter((change) => change.watermark <= last);
    return { watermark: last ?? BigInt(this.watermark), changes: whole };
  }

  async snapshotPage(_table: string, cursor: string | null, limit: number) {
    this.fail();
    this.snapshotLimits.push(limit);
    const ids = [...this.rows.keys()].sort().filter((id) => cursor === null || id > cursor);
    const page = ids.slice(0, limit);
    return {
      watermark: BigInt(this.watermark),
      rows: page.map((id) => this.rows.get(id)!),
      nextCursor: page.length < limit ? null : page.at(-1)!,
    };
  }
}
