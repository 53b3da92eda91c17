import type { UpstreamChange } from "@weir/engine-wasm";

/** A page of an upstream's changes (the contract's `GET /changes`). */
export interface UpstreamChangesPage {
  /** Everything up to here is included: the next page starts here. */
  watermark: bigint;
  /** In commit order, whole transactions only. */
  changes: UpstreamChange[];
}

/** A page of one table's rows in primary-key order (the contract's `GET /snapshot`). */
export interface UpstreamSnapshotPage {
  /** Taken no later than the rows were read: catching up from it converges. */
  watermark: bigint;
  rows: Record<string, unknown>[];
  /** Null on the table's last page. */
  nextCursor: string | null;
}

/**
 * A system of record a namespace replicates: over HTTP (the upstream contract), through a service
 * binding, or in process. Reads are idempotent: asking again answers the same.
 */
export interface UpstreamSource {
  /** Changes after `watermark`; throws UpstreamGoneError when the source no longer has them. */
  changes(watermark: bigint, limit: number): Promise<UpstreamChangesPage>;
  snapshotPage(table: string, cursor: string | null, limit: number): Promise<UpstreamSnapshotPage>;
}

/** The source no longer retains changes after the asked watermark: the namespace must resnapshot. */
export class UpstreamGoneError extends Error {
  override readonly name = "UpstreamGoneError";
  constructor(readonly oldest: bigint) {
    super(`the upstream retains changes from watermark ${oldest} on only`);
  }
}

/** A failed upstream call: its HTTP status (502 for a network failure) and any Retry-After. */
export class UpstreamCallError extends Error {
  override readonly name = "UpstreamCallError";
  constructor(
    readonly status: number,
    message: string,
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}
