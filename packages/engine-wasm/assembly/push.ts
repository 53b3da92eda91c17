// Push: deciding whether a mutation runs, and recording that it ran.
import { exec, queryRows } from "./host";
import { advanceWatermark } from "./state";
import { jsonString, params, parseI64 } from "./text";

export const PREFLIGHT_APPLY = "apply";
export const PREFLIGHT_REPLAY = "replay";
export const PREFLIGHT_OUT_OF_ORDER = "ooo";

/**
 * Whether mutation `id` of a client is next ("apply"), already done ("replay") or skips ahead
 * ("ooo"). Returns "<status>\t<last mutation id>" or a failure.
 */
export function preflight(groupID: string, clientID: string, id: i64): string {
  const rows = queryRows(
    "SELECT last_mutation_id FROM _weir_clients WHERE group_id = ? AND id = ?",
    params([jsonString(groupID), jsonString(clientID)]),
  );
  const last: i64 = rows.length > 0 ? parseI64(rows[0][0]) : 0;
  let status = PREFLIGHT_APPLY;
  if (id <= last) status = PREFLIGHT_REPLAY;
  else if (id > last + 1) status = PREFLIGHT_OUT_OF_ORDER;
  return status + "\t" + last.toString();
}

/**
 * Records mutation `id` as processed, in the caller's transaction, together with whatever the
 * mutator wrote: both commit as one new version, or neither does.
 */
export function finalize(groupID: string, clientID: string, id: i64): void {
  advanceWatermark();
  exec(
    "INSERT INTO _weir_clients (group_id, id, last_mutation_id, version) " +
      "VALUES (?, ?, ?, (SELECT watermark FROM _weir_state WHERE id = 1)) " +
      "ON CONFLICT (group_id, id) DO UPDATE SET last_mutation_id = excluded.last_mutation_id, version = excluded.version",
    params([jsonString(groupID), jsonString(clientID), id.toString()]),
  );
}
