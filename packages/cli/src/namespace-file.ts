import { existsSync, readFileSync, statSync } from "node:fs";
import { type Engine, engineWasmUrl, loadEngine, type SqlAdapter } from "@weir/engine-wasm";
import { betterSqliteAdapter } from "@weir/engine-wasm/better-sqlite3";
/** The host's knob table; the CLI reads the stored retention from it. */
import { CONTROL_TABLE as HOST_CONTROL_TABLE } from "@weir/host-core";
import Database from "better-sqlite3";
import { CliError } from "./cli-error.js";

/** A namespace database opened directly, with the engine that understands its bookkeeping. */
export interface NamespaceFile {
  readonly path: string;
  readonly db: Database.Database;
  readonly adapter: SqlAdapter;
  readonly engine: Engine;
  /** Tables that are neither the engine's nor the host's nor SQLite's own. */
  appTables(): string[];
  /** The retention an admin stored for this namespace, or null when the config's applies. */
  storedRetention(): number | null;
  sizes(): { databaseBytes: number; walBytes: number };
  close(): void;
}

let engine: Promise<Engine> | undefined;

function sharedEngine(): Promise<Engine> {
  engine ??= loadEngine(readFileSync(engineWasmUrl));
  return engine;
}

/**
 * Opens a namespace's SQLite file with better-sqlite3 (read-only unless `writable`) and checks
 * that it is a weir database. No server is involved.
 */
export async function openNamespaceFile(
  path: string,
  options: { writable: boolean },
): Promise<NamespaceFile> {
  if (!existsSync(path) || !statSync(path).isFile())
    throw new CliError(`no such database file: ${path}`, "not_found");
  let db: Database.Database;
  try {
    db = new Database(path, { readonly: !options.writable, fileMustExist: true });
    if (options.writable) db.pragma("busy_timeout = 5000");
    const hasState = db
      .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '_weir_state'")
      .pluck()
      .get();
    if (!hasState) {
      db.close();
      throw new CliError(
        `${path} is not a weir namespace database (it has no _weir_state table)`,
        "not_weir",
      );
    }
  } catch (error) {
    if (error instanceof CliError) throw error;
    throw new CliError(`cannot open ${path}: ${(error as Error).message}`, "open_failed");
  }
  const adapter = betterSqliteAdapter(db);
  return {
    path,
    db,
    adapter,
    engine: await sharedEngine(),
    appTables: () =>
      db
        .prepare(
          `SELECT name FROM sqlite_master WHERE type = 'table'
           AND name NOT LIKE '\\_weir%' ESCAPE '\\' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name`,
        )
        .pluck()
        .all() as string[],
    storedRetention: () => {
      const hasControl = db
        .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?")
        .pluck()
        .get(HOST_CONTROL_TABLE);
      if (!hasControl) return null;
      const value = db
        .prepare(`SELECT value FROM ${HOST_CONTROL_TABLE} WHERE key = 'retainChanges'`)
        .pluck()
        .get() as string | undefined;
      const parsed = value === undefined ? null : (JSON.parse(value) as unknown);
      return typeof parsed === "number" ? parsed : null;
    },
    sizes: () => ({
      databaseBytes: statSync(path).size,
      walBytes: existsSync(`${path}-wal`) ? statSync(`${path}-wal`).size : 0,
    }),
    close: () => db.close(),
  };
}

/** SQLite identifiers are quoted by doubling quotes (the names come from the file itself). */
export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
