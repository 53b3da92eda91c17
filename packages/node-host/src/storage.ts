import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { betterSqliteAdapter } from "@weir/engine-wasm/better-sqlite3";
import { type SqlJsDatabase, sqlJsAdapter } from "@weir/engine-wasm/sql-js";
import type { NamespaceStore, Storage } from "@weir/host-core";
import Database from "better-sqlite3";
import initSqlJs from "sql.js";

/** How long a writer waits for a lock another process holds before failing. */
const BUSY_TIMEOUT_MS = 5_000;

/**
 * One better-sqlite3 file per namespace, `<dataDir>/<namespace>.sqlite`, in WAL mode with
 * synchronous=NORMAL: a commit survives a process crash; only an OS crash may lose the last ones.
 */
export function fileStorage(dataDir: string): Storage {
  const dir = resolve(dataDir);
  return {
    closesWhenIdle: true,
    open(namespace) {
      mkdirSync(dir, { recursive: true });
      const db = new Database(join(dir, `${namespace}.sqlite`));
      try {
        db.pragma("journal_mode = WAL");
        db.pragma("synchronous = NORMAL");
        db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
      } catch (error) {
        db.close();
        throw error;
      }
      // One wrapper for every call: better-sqlite3 turns a nested call into a savepoint.
      const run = db.transaction((fn: () => unknown) => fn());
      return {
        db: betterSqliteAdapter(db),
        transaction: <T>(fn: () => T) => run(fn) as T,
        sizeBytes: () =>
          (db.pragma("page_count", { simple: true }) as number) *
          (db.pragma("page_size", { simple: true }) as number),
        close: () => db.close(),
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
