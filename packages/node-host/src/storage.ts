import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { betterSqliteAdapter } from "@weir/engine-wasm/better-sqlite3";
import { type SqlJsDatabase, sqlJsAdapter } from "@weir/engine-wasm/sql-js";
import {
  HttpError,
  type Logger,
  type NamespaceStore,
  NamespaceUnavailableError,
  type QuotaStore,
  type Storage,
  storageFailure,
} from "@weir/host-core";
import Database from "better-sqlite3";
import initSqlJs from "sql.js";
import { Checkpointer } from "./checkpointer.js";
import { databaseProblem } from "./database-problem.js";
import { statOf } from "./file-stat.js";
import { acquireLease, type Lease, LeaseHeldError } from "./lease.js";
import { NamespaceCatalog } from "./namespace-catalog.js";
import { sqliteQuotaStore } from "./sqlite-quota-store.js";

/** How long a writer waits for a lock another process holds before failing. */
const BUSY_TIMEOUT_MS = 5_000;
/** How long opening a namespace waits for another process's lease (a `weir maintain`, say). */
const LEASE_WAIT_MS = 2_000;

export interface FileStorageOptions {
  logger?: Logger;
  /** Caps each namespace's database at about this size (SQLite's max_page_count); past it pushes answer 507. */
  maxDatabaseBytes?: number;
  /**
   * Told how long each transaction held the thread (a namespace's step), by namespace, with what
   * it threw when it failed (undefined when it committed).
   */
  onStep?(namespace: string, ms: number, failure: unknown): void;
}

/** File storage, with what the server also needs of its data directory. */
export interface FileStorage extends Storage {
  /** Request quotas' spends, in the data directory's catalog (shared with other processes). */
  readonly quotaStore: QuotaStore;
  /** Resolves once every namespace closed so far has let go of its file, then closes the catalog. */
  close(): Promise<void>;
}

/**
 * One better-sqlite3 file per namespace, `<dataDir>/<namespace>.sqlite`, in WAL mode with
 * synchronous=NORMAL: a commit survives a process crash; only an OS crash may lose the last ones.
 * While a namespace is open the server holds the file's single-writer lease (`<file>.lease`),
 * so a `weir maintain` waits or yields; it lets go when the namespace closes (idle or shutdown).
 * Committed pages are copied back into the database by a worker thread (see Checkpointer), off
 * the thread that answers requests.
 *
 * A file is checked before it opens (see databaseProblem), and the data directory's catalog
 * (see NamespaceCatalog) remembers every namespace, so one whose file went missing or was emptied
 * is refused rather than recreated. A refusal is remembered until the file or the catalog entry
 * changes, so a refused namespace costs a `stat` per request, not a check.
 */
export function fileStorage(dataDir: string, options: FileStorageOptions = {}): FileStorage {
  const dir = resolve(dataDir);
  // Logged without the file: its name is the namespace's, which logs show only as a hash.
  const checkpointer = new Checkpointer((_file, error) =>
    options.logger?.log("warn", { msg: "background checkpoint failed", error }),
  );
  let opened: NamespaceCatalog | undefined;
  // Opened on first use, so that a data directory that cannot be made fails requests, not the start.
  const catalog = (): NamespaceCatalog => {
    if (!opened) {
      mkdirSync(dir, { recursive: true });
      opened = NamespaceCatalog.open(dir);
    }
    return opened;
  };
  const refusals = new Map<string, { signature: string; error: NamespaceUnavailableError }>();
  const closing = new Set<Promise<void>>();
  const fileOf = (namespace: string) => join(dir, `${namespace}.sqlite`);
  const signature = (namespace: string): string => {
    const file = fileOf(namespace);
    const main = statOf(file);
    const wal = statOf(`${file}-wal`);
    const known = catalog().entry(namespace) !== undefined;
    return `${main?.ino}:${main?.size}:${main?.mtimeMs}:${wal?.size ?? 0}:${known}`;
  };

  let spends: QuotaStore | undefined;
  const quotaStore: QuotaStore = {
    add(entries) {
      spends ??= sqliteQuotaStore(catalog().db);
      return spends.add(entries);
    },
  };
  return {
    closesWhenIdle: true,
    quotaStore,
    exists(namespace) {
      return statOf(fileOf(namespace)) !== null || catalog().entry(namespace) !== undefined;
    },
    async open(namespace, context = {}) {
      const file = fileOf(namespace);
      const refused = refusals.get(namespace);
      if (refused && refused.signature === signature(namespace)) throw refused.error;
      refusals.delete(namespace);
      let lease: Lease;
      try {
        // The catalog makes the data directory, where the lease file goes, on first use.
        catalog();
        lease = await acquireLease(file, { command: "weir server", waitMs: LEASE_WAIT_MS });
      } catch (error) {
        if (error instanceof LeaseHeldError) throw busy(error);
        throw openFailure(error, file);
      }
      let db: Database.Database | undefined;
      try {
        const problem = await databaseProblem(file, catalog().entry(namespace), checkpointer);
        if (problem) {
          const error = new NamespaceUnavailableError(problem.reason, problem.detail, file);
          refusals.set(namespace, { signature: signature(namespace), error });
          throw error;
        }
        db = new Database(file);
        db.pragma("journal_mode = WAL");
        db.pragma("synchronous = NORMAL");
        db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
        if (options.maxDatabaseBytes !== undefined) {
          const pageSize = db.pragma("page_size", { simple: true }) as number;
          db.pragma(`max_page_count = ${Math.max(1, Math.floor(options.maxDatabaseBytes / pageSize))}`);
        }
        catalog().recordOpened(namespace, context.creator ?? null);
      } catch (error) {
        db?.close();
        lease.release();
        throw openFailure(error, file);
      }
      const connection = db;
      // One wrapper for every call: better-sqlite3 turns a nested call into a savepoint.
      const run = connection.transaction((fn: () => unknown) => fn());
      const onStep = options.onStep;
      let depth = 0;
      return {
        db: betterSqliteAdapter(connection),
        location: file,
        transaction: <T>(fn: () => T) => {
          const started = onStep && depth === 0 ? performance.now() : -1;
          let failure: unknown;
          depth++;
          try {
            const result = run(fn) as T;
            checkpointer.written(file);
            return result;
          } catch (error) {
            failure = error;
            throw error;
          } finally {
            depth--;
            if (started >= 0) onStep!(namespace, performance.now() - started, failure);
          }
        },
        sizeBytes: () =>
          (connection.pragma("page_count", { simple: true }) as number) *
          (connection.pragma("page_size", { simple: true }) as number),
        close: (outcome = {}) => {
          // The server's connection first, then the worker's: the last to close removes the WAL,
          // and two closing at once would each leave it to the other.
          connection.close();
          const done = checkpointer
            .close(file)
            .then(() => {
              if (outcome.damaged) {
                const error = new NamespaceUnavailableError(
                  "corrupt",
                  "SQLite found it malformed while open",
                  file,
                );
                refusals.set(namespace, { signature: signature(namespace), error });
                return;
              }
              // Unchanged from here on, the file needs no check when it opens again.
              const stat = statOf(file);
              if (stat) catalog().recordClosed(namespace, outcome.watermark ?? 0, stat.size, stat.mtimeMs);
            })
            .catch((error: unknown) =>
              options.logger?.log("error", {
                msg: "recording a namespace's close failed",
                error: String(error),
              }),
            )
            .finally(() => closing.delete(done));
          closing.add(done);
          lease.release();
        },
      };
    },
    async close() {
      while (closing.size > 0) await Promise.allSettled([...closing]);
      opened?.close();
      opened = undefined;
      spends = undefined;
    },
  };
}

/** An error opening a namespace, as the client should see it. */
function openFailure(error: unknown, file: string): unknown {
  if (error instanceof HttpError) return error;
  const code = (error as { code?: unknown }).code;
  if (code === "EMFILE" || code === "ENFILE") {
    return new HttpError(
      "server_busy",
      "the server has no file descriptors left to open this namespace; retry shortly",
      {
        "retry-after": "1",
      },
    );
  }
  if (storageFailure(error) === "corrupt")
    return new NamespaceUnavailableError("corrupt", (error as Error).message, file);
  return error;
}

/** The client learns who holds the namespace, but not where its files are. */
function busy(error: LeaseHeldError): HttpError {
  const holder = error.holder;
  const who = holder
    ? `another process (${holder.command.split(" ").slice(0, 2).join(" ")}, pid ${holder.pid} on ${holder.host}, since ${holder.started})`
    : "another process (its lease file is not readable)";
  return new HttpError("namespace_busy", `the namespace is in use by ${who}; retry shortly`, {
    "retry-after": "5",
  });
}

/** sql.js databases in memory, for tests and for platforms without native modules. Lost on close. */
export async function memoryStorage(): Promise<Storage> {
  const SQL = await initSqlJs();
  return {
    closesWhenIdle: false,
    open(): NamespaceStore {
      const db = new SQL.Database();
      let depth = 0;
      const scalar = (sql: string) => Number(db.exec(sql)[0]?.values[0]?.[0] ?? 0);
      return {
        db: sqlJsAdapter(db as unknown as SqlJsDatabase),
        transaction<T>(fn: () => T): T {
          // sql.js has no transaction helper: BEGIN at the outside, a savepoint per nested level.
          const savepoint = `weir_${depth}`;
          db.run(depth === 0 ? "BEGIN" : `SAVEPOINT ${savepoint}`);
          depth++;
          try {
            const result = fn();
            db.run(depth === 1 ? "COMMIT" : `RELEASE ${savepoint}`);
            return result;
          } catch (error) {
            db.run(depth === 1 ? "ROLLBACK" : `ROLLBACK TO ${savepoint}; RELEASE ${savepoint}`);
            throw error;
          } finally {
            depth--;
          }
        },
        sizeBytes: () => scalar("PRAGMA page_count") * scalar("PRAGMA page_size"),
        close: () => db.close(),
      };
    },
  };
}
