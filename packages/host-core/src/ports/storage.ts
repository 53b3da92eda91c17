import type { SqlAdapter } from "@weir/engine-wasm";

/** One namespace's open database. */
export interface NamespaceStore {
  readonly db: SqlAdapter;
  /**
   * Runs `fn` in a transaction: commits when it returns, rolls back and rethrows when it throws.
   * A call inside another one must nest (a savepoint), so that one mutation can roll back alone
   * inside the transaction of its batch.
   */
  transaction<T>(fn: () => T): T;
  /** The database's size on disk or in memory, when the host can tell. */
  sizeBytes?(): number;
  /** Where the data lives, for operators' logs (a file path); never sent to clients. */
  readonly location?: string;
  /**
   * Closes the database. `watermark` is the namespace's latest version, for hosts that keep a
   * catalog of their namespaces; `damaged` says the database failed as corrupt while open, so the
   * host must not trust it when asked to open it again.
   */
  close(outcome?: StoreCloseOutcome): void;
}

export interface StoreCloseOutcome {
  watermark?: number;
  damaged?: boolean;
}

/**
 * Opens namespaces' databases: one SQLite database per namespace. `open` throws a
 * NamespaceUnavailableError for a database it finds damaged or lost, rather than serve it.
 */
export interface Storage {
  open(namespace: string, context?: OpenContext): NamespaceStore | Promise<NamespaceStore>;
  /** Whether closing a namespace that sat idle loses nothing (false for in-memory databases). */
  readonly closesWhenIdle: boolean;
  /**
   * Whether the namespace has a database already (opening one that has none creates it), for
   * hosts that can tell; without it every namespace counts as existing.
   */
  exists?(namespace: string): boolean | Promise<boolean>;
}

export interface OpenContext {
  /** The user whose request creates the namespace, when it does not exist yet. */
  creator?: string;
}
