/**
 * What a storage error means for the namespace, read from SQLite's own signals: the result code
 * where the driver gives one (better-sqlite3's `code`), else SQLite's message for it (sql.js and
 * a Durable Object's storage give the message alone).
 *
 * - `full`: the disk, or the database's size limit, has no room (SQLITE_FULL). The write was
 *   rolled back; reads go on, and writes do again once there is room.
 * - `corrupt`: the file is not a database, or not a sound one (SQLITE_CORRUPT, SQLITE_NOTADB).
 *   Nothing more may be read from it or written to it.
 */
export type StorageFailure = "full" | "corrupt";

const FULL_CODES = ["SQLITE_FULL"];
const CORRUPT_CODES = ["SQLITE_CORRUPT", "SQLITE_NOTADB"];
const FULL_MESSAGE = /database or disk is full|SQLITE_FULL/i;
const CORRUPT_MESSAGE =
  /database disk image is malformed|file is not a database|SQLITE_CORRUPT|SQLITE_NOTADB/i;

export function storageFailure(error: unknown): StorageFailure | null {
  if (!(error instanceof Error)) return null;
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string") {
    if (FULL_CODES.some((prefix) => code.startsWith(prefix))) return "full";
    if (CORRUPT_CODES.some((prefix) => code.startsWith(prefix))) return "corrupt";
  }
  if (FULL_MESSAGE.test(error.message)) return "full";
  if (CORRUPT_MESSAGE.test(error.message)) return "corrupt";
  return null;
}
