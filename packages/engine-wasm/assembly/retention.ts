// Retention: the change log keeps the newest versions only; older cookies get a full reset.
import { exec, queryRows } from "./host";
import { raiseFloorToWatermark, readVersions } from "./state";
import { params, parseI64 } from "./text";

/**
 * Raises the floor to keep the newest `retain` versions, then deletes up to `limit` changes
 * at or below it. Returns "<deleted>\t<floor>\t<more 0|1>".
 */
export function prune(retain: i64, limit: i64): string {
  const versions = readVersions();
  let floor = versions.floor;
  const wanted = versions.watermark - retain;
  if (wanted > floor) {
    floor = wanted;
    exec("UPDATE _weir_state SET floor = ? WHERE id = 1", params([floor.toString()]));
  }
  // Changes are numbered in version order and pruned from the oldest, so the next `limit` of
  // them are a seq range starting at the smallest seq: the delete reads no more than that.
  const oldest = queryRows("SELECT seq, version FROM _weir_changes ORDER BY seq LIMIT 1");
  if (oldest.length == 0 || parseI64(oldest[0][1]) > floor) return "0\t" + floor.toString() + "\t0";
  const first = parseI64(oldest[0][0]);
  const deleted = exec(
    "DELETE FROM _weir_changes WHERE seq >= ? AND seq < ? AND version <= ?",
    params([first.toString(), (first + limit).toString(), floor.toString()]),
  );
  let more = false;
  if (<i64>deleted == limit) {
    const next = queryRows("SELECT version FROM _weir_changes ORDER BY seq LIMIT 1");
    more = next.length > 0 && parseI64(next[0][0]) <= floor;
  }
  return deleted.toString() + "\t" + floor.toString() + "\t" + (more ? "1" : "0");
}

/** Every client resets once: the floor rises to a new version above every cookie handed out. */
export function invalidate(): void {
  raiseFloorToWatermark();
}
