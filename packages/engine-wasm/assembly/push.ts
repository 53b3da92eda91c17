// Push: deciding whether a mutation runs, and recording that it ran.
import { fail } from "./errors";
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
    "SELECT group_id = ?, last_mutation_id FROM _weir_clients WHERE id = ?",
    params([jsonString(groupID), jsonString(clientID)]),
  );
  let last: i64 = 0;
  if (rows.length > 0) {
    if (rows[0][0] != "1") return fail(403, "forbidden", "the client belongs to another client group");
    last = parseI64(rows[0][1]);
  }
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
    "INSERT INTO _weir_clients (id, group_id, last_mutation_id, version) " +
      "VALUES (?, ?, ?, (SELECT watermark FROM _weir_state WHERE id = 1)) " +
      "ON CONFLICT (id) DO UPDATE SET last_mutation_id = excluded.last_mutation_id, version = excluded.version",
    params([jsonString(clientID), jsonString(groupID), id.toString()]),
  );
}
