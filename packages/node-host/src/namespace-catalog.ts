import { join } from "node:path";
import Database from "better-sqlite3";

/** The catalog's file in a data directory: its name cannot be a namespace's (`.` is not allowed in one). */
export const CATALOG_FILE = "weir.catalog.sqlite";

/** What the catalog knows of a namespace. */
export interface CatalogEntry {
  name: string;
  createdAt: number;
  createdBy: string | null;
  /** The watermark it had when last closed cleanly (0 until then). */
  watermark: number;
  /** The file's size and modification time at its last clean close; null while it is open, or after a crash. */
  closedSize: number | null;
  closedMtimeMs: number | null;
}

interface EntryRow {
  name: string;
  created_at: number;
  created_by: string | null;
  watermark: number;
  closed_size: number | null;
  closed_mtime_ms: number | null;
}

/** How long an open refused by another thread's lock keeps trying (ms). */
const OPEN_RETRY_MS = 5_000;

const sleeper = new Int32Array(new SharedArrayBuffer(4));
function sleepSync(ms: number): void {
  Atomics.wait(sleeper, 0, 0, ms);
}

function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && code.startsWith("SQLITE_BUSY");
}

/** The catalog's settings and tables (each statement safe to run again). */
function prepareCatalog(db: Database.Database): void {
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.pragma("busy_timeout = 5000");
  db.exec(`
    CREATE TABLE IF NOT EXISTS namespaces (
      name TEXT PRIMARY KEY,
      created_at INTEGER NOT NULL,
      created_by TEXT,
      watermark INTEGER NOT NULL DEFAULT 0,
      closed_size INTEGER,
      closed_mtime_ms REAL
    ) WITHOUT ROWID;
    CREATE TABLE IF NOT EXISTS quota_spend (
      key TEXT NOT NULL,
      win INTEGER NOT NULL,
      units INTEGER NOT NULL,
      PRIMARY KEY (key, win)
    ) WITHOUT ROWID;`);
}

/**
 * The namespaces a data directory holds, in a small SQLite file beside them, so that a namespace
 * that existed is never silently recreated empty when its file goes missing or is emptied, and
 * so that a file unchanged since its last clean close need not be checked again when it opens.
 * Several processes may share it (WAL, a busy timeout), and request quotas keep their spends in
 * it too.
 */
export class NamespaceCatalog {
  readonly db: Database.Database;
  private readonly select: Database.Statement<[string], EntryRow>;
  private readonly opened: Database.Statement<[string, number, string | null]>;
  private readonly closed: Database.Statement<[number, number, number, string]>;

  private constructor(db: Database.Database) {
    this.db = db;
    this.select = db.prepare("SELECT * FROM namespaces WHERE name = ?");
    this.opened = db.prepare(
      "INSERT INTO namespaces (name, created_at, created_by) VALUES (?, ?, ?) " +
        "ON CONFLICT (name) DO UPDATE SET closed_size = NULL, closed_mtime_ms = NULL",
    );
    this.closed = db.prepare(
      "UPDATE namespaces SET watermark = ?, closed_size = ?, closed_mtime_ms = ? WHERE name = ?",
    );
  }

  /**
   * Opens (creating) the catalog of `dataDir`, which must exist. Threads that open it together
   * may find SQLite refusing one of them at once rather than waiting (two connections turning
   * the file to WAL would each wait on the other): such an open starts again, for up to
   * OPEN_RETRY_MS.
   */
  static open(dataDir: string): NamespaceCatalog {
    const file = join(dataDir, CATALOG_FILE);
    const deadline = Date.now() + OPEN_RETRY_MS;
    for (let attempt = 1; ; attempt++) {
      const db = new Database(file);
      try {
        prepareCatalog(db);
        return new NamespaceCatalog(db);
      } catch (error) {
        db.close();
        if (!isBusy(error) || Date.now() >= deadline) throw error;
        // A few ms, longer each time and never in step with the other thread.
        sleepSync(Math.min(50, attempt * 2) + Math.random() * 5);
      }
    }
  }

  entry(name: string): CatalogEntry | undefined {
    const row = this.select.get(name);
    if (!row) return undefined;
    return {
      name: row.name,
      createdAt: row.created_at,
      createdBy: row.created_by,
      watermark: row.watermark,
      closedSize: row.closed_size,
      closedMtimeMs: row.closed_mtime_ms,
    };
  }

  /** The namespace is open: recorded if new (created, or a file found in place), its close stamp cleared. */
  recordOpened(name: string, createdBy: string | null): void {
    this.opened.run(name, Date.now(), createdBy);
  }

  /** The namespace closed cleanly: its watermark, and its file's size and modification time. */
  recordClosed(name: string, watermark: number, size: number, mtimeMs: number): void {
    this.closed.run(watermark, size, mtimeMs, name);
  }

  /** Forgets a namespace (an operator accepted the loss of its data). Answers whether it was known. */
  forget(name: string): boolean {
    return this.db.prepare("DELETE FROM namespaces WHERE name = ?").run(name).changes > 0;
  }

  close(): void {
    this.db.close();
  }
}
