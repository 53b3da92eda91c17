import type { ReaderState } from "./replication-reader.js";
import type { SchemaDrift } from "./schema-drift.js";
import type { UnservableTenantsStatus } from "./unservable-tenants.js";

/**
 * What `status()` and `GET /status` report. Watermarks are JSON-ready: numbers while safe,
 * decimal strings beyond.
 */
export interface UpstreamStatus {
  state: ReaderState;
  slot: string;
  publication: string;
  tables: string[];
  /** WAL PostgreSQL keeps for the slot past its confirmed position; null while unreachable. */
  slotLagBytes: number | null;
  /** The LSN the reader confirmed to PostgreSQL. */
  confirmedLsn: string;
  buffer: {
    file: string;
    changes: number;
    transactions: number;
    bytes: number;
    oldestWatermark: number | string;
    newestWatermark: number | string;
    /** Why buffered changes were dropped at start, if they were. */
    resetReason: string | null;
  };
  /** The watermark each namespace last asked changes from, and when. */
  namespaces: Record<string, { watermark: number | string; at: string }>;
  reconnect: { attempts: number; failures: number };
  lastError: string | null;
  drift: SchemaDrift | null;
  committed: { transactions: number; changes: number };
  notify: { sent: number; failed: number; lastError: string | null } | null;
  /** Tenant values that are no namespace name: rows no namespace can be served. */
  tenants: UnservableTenantsStatus;
  /** The reader's thread: how often it was started again after failing (null: no thread of its own). */
  thread: { restarts: number } | null;
}
