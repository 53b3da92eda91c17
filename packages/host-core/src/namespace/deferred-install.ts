import type { Engine, SqlAdapter } from "@weir/engine-wasm";
import type { NamespaceStore } from "../ports/storage.js";

/** The engine's calls that do not need the database installed. */
const WITHOUT_INSTALL = new Set<PropertyKey>(["install", "isPristine", "pullPristine", "memoryBytes"]);

/**
 * The store of a namespace whose database held nothing of weir's when it opened: the engine is
 * installed on first use instead, so a namespace that is only pulled from costs no write and no
 * commit. The first transaction installs inside itself (so the install commits with what it
 * writes, or not at all), and a statement outside any transaction installs first in its own
 * (an engine call that reads outside a transaction calls `install` before it). Only a plain pull,
 * answered without the database (`Engine.pullPristine`), leaves the install pending.
 */
export class DeferredInstall {
  readonly store: NamespaceStore;
  private installPending = true;
  /** Transactions of this store open now. */
  private depth = 0;

  constructor(
    inner: NamespaceStore,
    /** Installs everything the namespace keeps in its database, on `store.db`. */
    private readonly installer: () => void,
  ) {
    const db: SqlAdapter = {
      query: (sql, params) => {
        this.install();
        return inner.db.query(sql, params);
      },
      exec: (sql, params) => {
        this.install();
        return inner.db.exec(sql, params);
      },
      ...(inner.db.defineFunction
        ? { defineFunction: (name, fn) => inner.db.defineFunction!(name, fn) }
        : {}),
    };
    this.store = {
      db,
      transaction: (fn) => this.transaction(inner, fn),
      ...(inner.sizeBytes ? { sizeBytes: () => inner.sizeBytes!() } : {}),
      ...(inner.location === undefined ? {} : { location: inner.location }),
      close: (outcome) => inner.close(outcome),
    };
  }

  /**
   * `engine`, installing first (outside a transaction) before each call that needs the database:
   * an engine call cannot run another inside it, so it must not be the one that installs.
   */
  installing(engine: Engine): Engine {
    return new Proxy(engine, {
      get: (target, key) => {
        const value = Reflect.get(target, key, target) as unknown;
        if (typeof value !== "function") return value;
        if (WITHOUT_INSTALL.has(key)) return value.bind(target);
        return (...args: unknown[]) => {
          this.install();
          return (value as (...args: unknown[]) => unknown).apply(target, args);
        };
      },
    });
  }

  /** Whether nothing was installed yet. */
  get pending(): boolean {
    return this.installPending;
  }

  private transaction<T>(inner: NamespaceStore, fn: () => T): T {
    if (!this.installPending) return inner.transaction(fn);
    const outermost = this.depth === 0;
    this.depth++;
    try {
      const result = inner.transaction(() => {
        if (outermost) this.installer();
        return fn();
      });
      // Rolled back, the install is pending still: the next transaction installs again.
      if (outermost) this.installPending = false;
      return result;
    } finally {
      this.depth--;
    }
  }

  /** Installs now (in a transaction of its own) unless it was or a transaction is open. */
  install(): void {
    if (this.installPending && this.depth === 0) this.store.transaction(() => {});
  }
}
