// Retention: the change log keeps the newest versions only; older cookies get a full reset.
import { exec, queryRows } from "./host";
import { firstSeq, raiseFloorToWatermark, readVersions } from "./state";
import { params } from "./text";

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
  // Changes are numbered in version order, so those at or below the floor are a seq range at
  // the start of the log: the delete reads no more than `limit` of them.
  const deleted = exec(
    "DELETE FROM _weir_changes WHERE seq IN (SELECT seq FROM _weir_changes WHERE seq < ? ORDER BY seq LIMIT ?)",
    params([firstSeq(floor + 1).toString(), limit.toString()]),
  );
  let more = false;
  if (<i64>deleted == limit) {
    more =
      queryRows("SELECT 1 FROM _weir_changes WHERE seq < ? LIMIT 1", params([firstSeq(floor + 1).toString()]))
        .length > 0;
  }
  return deleted.toString() + "\t" + floor.toString() + "\t" + (more ? "1" : "0");
}

/** Every client resets once: the floor rises to a new version above every cookie handed out. */
export function invalidate(): void {
  raiseFloorToWatermark();
}
