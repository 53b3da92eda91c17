// Retention: the change log keeps the newest versions only; older cookies get a full reset.
import { pruneKeys } from "./change-keys";
import { QUERY_ENGINE } from "./features";
import { exec, queryRows } from "./host";
import { pruneMoves } from "./query/journal";
import { PRIOR_SEQ, parseSchema, priorTableName } from "./schema";
import { firstSeq, raiseFloorToWatermark, readVersions } from "./state";
import { params, parseI64 } from "./text";

/**
 * The versions that committed no change, only a query-aware answer's new cookie (a change of a
 * group's queries, a cut answer): they do not count toward retention, so however often some
 * clients change their queries, the others' cookies stay as servable as their writes allow.
 */
export const QUIET_VERSIONS_TABLE =
  "CREATE TABLE IF NOT EXISTS _weir_quiet_versions (version INTEGER PRIMARY KEY)";

/** Notes that `version` (just committed) holds no change. */
export function noteQuietVersion(version: i64): void {
  exec("INSERT OR IGNORE INTO _weir_quiet_versions (version) VALUES (?)", params([version.toString()]));
}

/**
 * The floor that keeps the newest `retain` versions holding changes: the watermark less
 * `retain` and the quiet versions above the floor so found. The j-th newest quiet version
 * (j from 1) is inside the window when it is above watermark - retain - (j - 1); the first one
 * that is not ends the count.
 */
function retainedFloor(watermark: i64, retain: i64, floor: i64): i64 {
  const start = watermark - retain;
  const found = queryRows(
    "SELECT coalesce(min(rn) - 1, (SELECT count(*) FROM _weir_quiet_versions WHERE version > ?)) FROM " +
      "(SELECT version, row_number() OVER (ORDER BY version DESC) AS rn FROM _weir_quiet_versions " +
      "WHERE version > ?) WHERE version <= ? - (rn - 1)",
    params([floor.toString(), floor.toString(), start.toString()]),
  );
  return start - parseI64(found[0][0]);
}

/**
 * Raises the floor to keep the newest `retain` versions that hold changes, then deletes up to
 * `limit` changes at or below it. `queryTables`: the database has them (query/tables.ts), and
 * so quiet versions and moves. Returns "<deleted>\t<floor>\t<more 0|1>".
 */
export function prune(retain: i64, limit: i64, queryTables: bool): string {
  const versions = readVersions();
  let floor = versions.floor;
  // A lean build never installs on a database with the query tables (install.ts).
  const wanted =
    QUERY_ENGINE && queryTables
      ? retainedFloor(versions.watermark, retain, floor)
      : versions.watermark - retain;
  if (wanted > floor) {
    floor = wanted;
    exec("UPDATE _weir_state SET floor = ? WHERE id = 1", params([floor.toString()]));
    if (QUERY_ENGINE && queryTables) {
      exec("DELETE FROM _weir_quiet_versions WHERE version <= ?", params([floor.toString()]));
      pruneMoves(floor);
    }
  }
  // Changes are numbered in version order, so those at or below the floor are a seq range at
  // the start of the log, and a batch reads no more than `limit` of them (with the commit
  // markers between them). The newest row, a commit marker, stays: it tells the watermark.
  const below = firstSeq(floor + 1).toString();
  const batch = queryRows(
    "SELECT count(*), coalesce(max(seq), -1) FROM " +
      "(SELECT seq FROM _weir_changes WHERE seq < ? AND tbl <> '' ORDER BY seq LIMIT ?)",
    params([below, limit.toString()]),
  );
  const deleted = parseI64(batch[0][0]);
  const full = deleted == limit;
  const upTo = full ? batch[0][1] : below;
  const keepNewest = "seq < (SELECT max(seq) FROM _weir_changes)";
  const bound = full ? "<=" : "<";
  exec("DELETE FROM _weir_changes WHERE seq " + bound + " ? AND " + keepNewest, params([upTo]));
  // The prior values of the deleted changes, which share their seq; the newest row is a marker
  // and has none.
  const installed = parseSchema(queryRows("SELECT schema FROM _weir_state WHERE id = 1")[0][0]);
  for (let i = 0; i < installed.tables.length; i++) {
    const prior = priorTableName(installed.tables[i]);
    exec("DELETE FROM " + prior + " WHERE " + PRIOR_SEQ + " " + bound + " ?", params([upTo]));
  }
  pruneKeys(bound, upTo);
  const more =
    full &&
    queryRows("SELECT 1 FROM _weir_changes WHERE seq < ? AND tbl <> '' LIMIT 1", params([below])).length > 0;
  return deleted.toString() + "\t" + floor.toString() + "\t" + (more ? "1" : "0");
}

/** Every client resets once: the floor rises to a new version above every cookie handed out. */
export function invalidate(): void {
  raiseFloorToWatermark();
}
