import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { betterSqliteAdapter } from "@weir/engine-wasm/better-sqlite3";
import { type SqlJsDatabase, sqlJsAdapter } from "@weir/engine-wasm/sql-js";
import { HttpError, type Logger, type NamespaceStore, type Storage } from "@weir/host-core";
import Database from "better-sqlite3";
import initSqlJs from "sql.js";
import { Checkpointer } from "./checkpointer.js";
import { acquireLease, type Lease, LeaseHeldError } from "./lease.js";

/** How long a writer waits for a lock another process holds before failing. */
const BUSY_TIMEOUT_MS = 5_000;
/** How long opening a namespace waits for another process's lease (a `weir maintain`, say). */
const LEASE_WAIT_MS = 2_000;

/**
 * One better-sqlite3 file per namespace, `<dataDir>/<namespace>.sqlite`, in WAL mode with
 * synchronous=NORMAL: a commit survives a process crash; only an OS crash may lose the last ones.
 * While a namespace is open the server holds the file's single-writer lease (`<file>.lease`),
 * so a `weir maintain` waits or yields; it lets go when the namespace closes (idle or shutdown).
 * Committed pages are copied back into the database by a worker thread (see Checkpointer), off
 * the thread that answers requests.
 */
export function fileStorage(dataDir: string, options: { logger?: Logger } = {}): Storage {
  const dir = resolve(dataDir);
  // Logged without the file: its name is the namespace's, which logs show only as a hash.
  const checkpointer = new Checkpointer((_file, error) =>
    options.logger?.log("warn", { msg: "background checkpoint failed", error }),
  );
  return {
    closesWhenIdle: true,
    async open(namespace) {
      mkdirSync(dir, { recursive: true });
      const file = join(dir, `${namespace}.sqlite`);
      let lease: Lease;
      try {
        lease = await acquireLease(file, { command: "weir server", waitMs: LEASE_WAIT_MS });
      } catch (error) {
        if (error instanceof LeaseHeldError) throw busy(error);
        throw error;
      }
      let db: Database.Database | undefined;
      try {
        db = new Database(file);
        db.pragma("journal_mode = WAL");
        db.pragma("synchronous = NORMAL");
        db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
      } catch (error) {
        db?.close();
        lease.release();
        throw error;
      }
      const opened = db;
      // One wrapper for every call: better-sqlite3 turns a nested call into a savepoint.
      const run = opened.transaction((fn: () => unknown) => fn());
      return {
        db: betterSqliteAdapter(opened),
        transaction: <T>(fn: () => T) => {
          const result = run(fn) as T;
          checkpointer.written(file);
          return result;
        },
        sizeBytes: () =>
          (opened.pragma("page_count", { simple: true }) as number) *
          (opened.pragma("page_size", { simple: true }) as number),
        close: () => {
          // The server's connection first, then the worker's: the last to close removes the WAL,
          // and two closing at once would each leave it to the other.
          opened.close();
          void checkpointer.close(file);
          lease.release();
        },
      };
    },
  };
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
