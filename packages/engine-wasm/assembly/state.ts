// The engine's bookkeeping, under the reserved `_weir_` prefix.
import { exec, queryRows } from "./host";
import { parseI64 } from "./text";

export const BOOKKEEPING_SQL: Array<string> = [
  "CREATE TABLE IF NOT EXISTS _weir_state (id INTEGER PRIMARY KEY CHECK (id = 1), " +
    "watermark INTEGER NOT NULL, floor INTEGER NOT NULL, engine_version TEXT NOT NULL, schema TEXT NOT NULL)",
  // One row per captured row change. `old` is the row before the change (NULL when it did not
  // exist), so that a pull can tell whether the client held the row at its cookie. The rowid
  // `seq` starts with the version (version * 2^24 + n), so "changes after version v" is a
  // rowid range and the log needs no index of its own.
  "CREATE TABLE IF NOT EXISTS _weir_changes (seq INTEGER PRIMARY KEY, version INTEGER NOT NULL, " +
    "tbl TEXT NOT NULL, pk TEXT NOT NULL, old TEXT, " +
    "CHECK (seq >= version * 16777216 AND seq < (version + 1) * 16777216))",
  "CREATE TABLE IF NOT EXISTS _weir_client_groups (id TEXT PRIMARY KEY, user_id TEXT NOT NULL) WITHOUT ROWID",
  // A client is known within its group: the same id in another group is another client.
  "CREATE TABLE IF NOT EXISTS _weir_clients (group_id TEXT NOT NULL, id TEXT NOT NULL, " +
    "last_mutation_id INTEGER NOT NULL, version INTEGER NOT NULL, PRIMARY KEY (group_id, id)) WITHOUT ROWID",
];

/** Changes of one version: their seq is version * CHANGES_PER_VERSION + n. */
export const CHANGES_PER_VERSION: i64 = 16777216;

/** The first seq a change of `version` can have. */
export function firstSeq(version: i64): i64 {
  return version * CHANGES_PER_VERSION;
}

export class Versions {
  constructor(
    public watermark: i64,
    public floor: i64,
  ) {}
}

export function readVersions(): Versions {
  const rows = queryRows("SELECT watermark, floor FROM _weir_state WHERE id = 1");
  return new Versions(parseI64(rows[0][0]), parseI64(rows[0][1]));
}

/** Commits the pending version: the changes captured in this transaction become visible to pulls. */
export function advanceWatermark(): void {
  exec("UPDATE _weir_state SET watermark = watermark + 1 WHERE id = 1");
}

/** Every cookie older than the current watermark now gets a full reset. */
export function raiseFloorToWatermark(): void {
  exec("UPDATE _weir_state SET watermark = watermark + 1, floor = watermark + 1 WHERE id = 1");
}
