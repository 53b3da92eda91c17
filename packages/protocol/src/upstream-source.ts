import type { UpstreamChangesResponse } from "./upstream-changes-response.js";
import type { UpstreamSnapshotResponse } from "./upstream-snapshot-response.js";

/**
 * A page of an upstream's changes (the contract's `GET /changes`): whole transactions in commit
 * order, and the watermark everything up to is included (the next page starts there).
 */
export type UpstreamChangesPage = UpstreamChangesResponse;

/**
 * A page of one table's rows in primary-key order (the contract's `GET /snapshot`), with a
 * watermark taken no later than the rows were read: catching up from it converges.
 */
export type UpstreamSnapshotPage = UpstreamSnapshotResponse;

/**
 * A system of record a namespace replicates: over HTTP (the upstream contract), through a service
 * binding, or in process. Reads are idempotent: asking again answers the same.
 */
export interface UpstreamSource {
  /** Changes after `watermark`; rejects with UpstreamGoneError when the source no longer has them. */
  changes(watermark: bigint, limit: number): Promise<UpstreamChangesPage>;
  snapshotPage(table: string, cursor: string | null, limit: number): Promise<UpstreamSnapshotPage>;
}

/**
 * A refused or failed upstream call, with the HTTP status and code it answers with (over HTTP,
 * what the upstream answered; 502 for a network failure) and any Retry-After.
 */
export class UpstreamCallError extends Error {
  override readonly name: string = "UpstreamCallError";
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

/** The source no longer retains changes after the asked watermark: the namespace must resnapshot. */
export class UpstreamGoneError extends UpstreamCallError {
  override readonly name = "UpstreamGoneError";
  constructor(
    readonly oldest: bigint,
    watermark?: bigint,
  ) {
    super(
      410,
      "gone",
      watermark === undefined
        ? `the upstream retains changes from watermark ${oldest} on only: take a fresh snapshot`
        : `watermark ${watermark} is older than the oldest retained, ${oldest}: take a fresh snapshot`,
    );
  }
}
