// The engine's bookkeeping, under the reserved `_weir_` prefix.
import { exec, queryRows } from "./host";
import { parseI64 } from "./text";

export const BOOKKEEPING_SQL: Array<string> = [
  "CREATE TABLE IF NOT EXISTS _weir_state (id INTEGER PRIMARY KEY CHECK (id = 1), " +
    "watermark INTEGER NOT NULL, floor INTEGER NOT NULL, engine_version TEXT NOT NULL, schema TEXT NOT NULL)",
  // One row per captured row change. `old` is the row before the change (NULL when it did not
  // exist), so that a pull can tell whether the client held the row at its cookie.
  "CREATE TABLE IF NOT EXISTS _weir_changes (seq INTEGER PRIMARY KEY, version INTEGER NOT NULL, " +
    "tbl TEXT NOT NULL, pk TEXT NOT NULL, old TEXT)",
  "CREATE INDEX IF NOT EXISTS _weir_changes_by_table ON _weir_changes (tbl, version)",
  "CREATE INDEX IF NOT EXISTS _weir_changes_by_version ON _weir_changes (version)",
  "CREATE TABLE IF NOT EXISTS _weir_client_groups (id TEXT PRIMARY KEY, user_id TEXT NOT NULL) WITHOUT ROWID",
  "CREATE TABLE IF NOT EXISTS _weir_clients (id TEXT PRIMARY KEY, group_id TEXT NOT NULL, " +
    "last_mutation_id INTEGER NOT NULL, version INTEGER NOT NULL) WITHOUT ROWID",
  "CREATE INDEX IF NOT EXISTS _weir_clients_by_group ON _weir_clients (group_id, version)",
];

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
