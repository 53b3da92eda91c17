// The change buffer's file: what it stores (a row change, a transaction, the buffer's owner)
// and its tables.

/** One row change as the buffer keeps it: the row already in weir's types, as JSON text. */
export interface BufferedChange {
  tableName: string;
  op: "INSERT" | "UPDATE" | "DELETE" | "TRUNCATE";
  /** The new row's sent columns (INSERT, UPDATE). */
  rowJson: string | null;
  /** The old row's primary key (UPDATE, DELETE). */
  oldKeyJson: string | null;
  keyChanged: boolean;
  /** The tenant of the new row and of the old one (tenant tables only). */
  newTenant: string | null;
  oldTenant: string | null;
  /** Reaches every namespace: a table without a tenant column, or a TRUNCATE. */
  shared: boolean;
}

/** A PostgreSQL transaction whose commit was decoded: the unit the buffer commits. */
export interface CommittedTransaction {
  watermark: bigint;
  xid: number;
  /** The end of its commit record: where PostgreSQL resumes after it. */
  endLsn: bigint;
  /** Its changes not yet written as pending ones, numbered from `firstSeq`. */
  changes: BufferedChange[];
  firstSeq: number;
  /** All of its changes, pending ones included. */
  total: number;
}

/** A change as read back, before it is shaped for one namespace. */
export interface StoredChange {
  watermark: bigint;
  table_name: string;
  op: BufferedChange["op"];
  row_data: string | null;
  old_key: string | null;
  key_changed: bigint;
  new_tenant: string | null;
  old_tenant: string | null;
  shared: bigint;
}

/** Who the buffer belongs to: a buffer is never read for another slot, or another table set. */
export interface BufferIdentity {
  slot: string;
  publication: string;
  /** A digest of the tables, columns and tenant rules the rows were encoded with. */
  configKey: string;
}

export interface Retention {
  maxAgeMs: number;
  maxChanges: number;
}

/** The buffer's tables: its meta values, transactions, changes, each tenant's route, cursors. */
export const BUFFER_SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS tx (
  watermark INTEGER PRIMARY KEY, xid INTEGER NOT NULL, end_lsn INTEGER NOT NULL,
  committed_at INTEGER NOT NULL, changes INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS tx_xid ON tx (xid);
CREATE TABLE IF NOT EXISTS change (
  watermark INTEGER NOT NULL, seq INTEGER NOT NULL, table_name TEXT NOT NULL, op TEXT NOT NULL,
  row_data TEXT, old_key TEXT, key_changed INTEGER NOT NULL, new_tenant TEXT, old_tenant TEXT,
  shared INTEGER NOT NULL, PRIMARY KEY (watermark, seq)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS change_shared ON change (watermark, seq) WHERE shared = 1;
CREATE TABLE IF NOT EXISTS route (
  tenant TEXT NOT NULL, watermark INTEGER NOT NULL, seq INTEGER NOT NULL,
  PRIMARY KEY (tenant, watermark, seq)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS cursor (namespace TEXT PRIMARY KEY, watermark INTEGER NOT NULL, asked_at INTEGER NOT NULL);
`;

export const CHANGE_COLUMNS =
  "watermark, table_name, op, row_data, old_key, key_changed, new_tenant, old_tenant, shared";
