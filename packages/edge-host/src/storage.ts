import type { NamespaceStore, Storage } from "@weir/host-core";
import { sqlStorageAdapter } from "./sql-storage-adapter.js";

/**
 * The one namespace a Durable Object serves, in its own SQLite database. Transactions are
 * `transactionSync` (a nested call is a savepoint); the platform owns `BEGIN`/`COMMIT`.
 */
export function durableObjectStore(storage: DurableObjectStorage): NamespaceStore {
  return {
    db: sqlStorageAdapter(storage.sql),
    transaction: <T>(fn: () => T): T => storage.transactionSync(fn),
    sizeBytes: () => storage.sql.databaseSize,
    // The platform closes the database when it evicts the object.
    close() {},
  };
}

/** The Storage port of one object: it opens only the namespace the object is bound to. */
export function durableObjectStorage(storage: DurableObjectStorage, bound: () => string | null): Storage {
  let store: NamespaceStore | undefined;
  return {
    closesWhenIdle: false,
    open(namespace) {
      const name = bound();
      if (name !== namespace) {
        throw new Error(
          `this object serves namespace ${JSON.stringify(name)}, not ${JSON.stringify(namespace)}`,
        );
      }
      store ??= durableObjectStore(storage);
      return store;
    },
  };
}
