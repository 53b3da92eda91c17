import type { Stats } from "node:fs";
import type { UnavailableReason } from "@weir/host-core";
import type { Checkpointer } from "./checkpointer.js";
import { headerProblem } from "./database-header.js";
import { statOf } from "./file-stat.js";
import type { CatalogEntry } from "./namespace-catalog.js";

export interface DatabaseProblem {
  reason: UnavailableReason;
  detail: string;
}

/**
 * What stops a namespace's file from being served, or null. A namespace the catalog knows must
 * still have its data: a missing or empty file is not made a new, empty namespace (its clients
 * would be told to drop theirs). A file must have a sound header, and, unless it is exactly as
 * it was at its last clean close, pass SQLite's quick_check (in the worker thread: on a 1 GB
 * file it reads the whole file, about a second when cached and several from a cold disk, which
 * is why an unchanged file is not checked again).
 */
export async function databaseProblem(
  file: string,
  entry: CatalogEntry | undefined,
  checkpointer: Checkpointer,
): Promise<DatabaseProblem | null> {
  const main = statOf(file);
  const walBytes = statOf(`${file}-wal`)?.size ?? 0;
  const lastSeen = entry ? ` (last closed at watermark ${entry.watermark})` : "";
  if (!main) return entry ? { reason: "missing", detail: `the file is missing${lastSeen}` } : null;
  if (main.size === 0 && walBytes === 0) {
    return entry ? { reason: "empty", detail: `the file is empty${lastSeen}` } : null;
  }
  // A file whose pages are all still in its WAL is read through the WAL, and checked below.
  const header = main.size === 0 ? null : headerProblem(file, main.size, walBytes);
  if (header) return { reason: "corrupt", detail: header };
  if (unchangedSinceClose(entry, main, walBytes)) return null;
  const integrity = await checkpointer.integrity(file);
  return integrity.ok ? null : { reason: "corrupt", detail: integrity.problem };
}

function unchangedSinceClose(entry: CatalogEntry | undefined, main: Stats, walBytes: number): boolean {
  return entry?.closedSize === main.size && entry.closedMtimeMs === main.mtimeMs && walBytes === 0;
}
