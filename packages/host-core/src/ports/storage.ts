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
  close(): void;
}

/** Opens namespaces' databases: one SQLite database per namespace. */
export interface Storage {
  open(namespace: string): NamespaceStore | Promise<NamespaceStore>;
  /** Whether closing a namespace that sat idle loses nothing (false for in-memory databases). */
  readonly closesWhenIdle: boolean;
}
