/** What happened to a row, as the upstream contract names it. */
export type UpstreamOp = "INSERT" | "UPDATE" | "DELETE" | "TRUNCATE";

/** One row change of an upstream transaction, with the transaction's watermark. */
export interface UpstreamChange {
  watermark: bigint;
  tableName: string;
  op: UpstreamOp;
  /** The new row (the sent columns) for INSERT and UPDATE; null for DELETE and TRUNCATE. */
  rowData: Record<string, unknown> | null;
  /** The old primary key for a DELETE and for an UPDATE that changed the key; otherwise null. */
  oldData: Record<string, unknown> | null;
}

/** An answer to `changes`: whole transactions in commit order, and the watermark to ask from next. */
export interface ChangesPage {
  watermark: bigint;
  changes: UpstreamChange[];
}

/** A page of one table's rows in primary-key order. */
export interface SnapshotPage {
  /** Applying the pages, then the changes after the first page's watermark, converges. */
  watermark: bigint;
  rows: Record<string, unknown>[];
  /** Where the next page starts; null on the table's last page. */
  nextCursor: string | null;
}

/**
 * An upstream as a namespace sees it: the two calls of the upstream contract, in process.
 * `changes` rejects with an `UpstreamGoneError` (410) when `watermark` is older than what is
 * retained; the namespace then takes a fresh snapshot.
 */
export interface UpstreamSource {
  changes(watermark: bigint, limit: number): Promise<ChangesPage>;
  snapshotPage(table: string, cursor: string | null, limit: number): Promise<SnapshotPage>;
}
