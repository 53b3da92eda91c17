// Push: deciding whether a mutation runs, and recording that it ran.
import { execStatement, queryStatement, Statement } from "./host";
import { PENDING_VERSION } from "./state";
import { jsonString, parseI64 } from "./text";

const LAST_MUTATION_ID = new Statement(
  "SELECT last_mutation_id FROM _weir_clients WHERE group_id = ? AND id = ?",
);
const RECORD_PROCESSED = new Statement(
  "INSERT INTO _weir_clients (group_id, id, last_mutation_id, version) VALUES (?, ?, ?, " +
    PENDING_VERSION +
    ") " +
    "ON CONFLICT (group_id, id) DO UPDATE SET last_mutation_id = excluded.last_mutation_id, version = excluded.version",
);

function params2(a: string, b: string): string {
  return "[" + a + "," + b + "]";
}

export const PREFLIGHT_APPLY = "apply";
export const PREFLIGHT_REPLAY = "replay";
export const PREFLIGHT_OUT_OF_ORDER = "ooo";

/**
 * Whether mutation `id` of a client is next ("apply"), already done ("replay") or skips ahead
 * ("ooo"). Returns "<status>\t<last mutation id>" or a failure.
 */
export function preflight(groupID: string, clientID: string, id: i64): string {
  const last = parseI64(queryStatement(LAST_MUTATION_ID, params2(jsonString(groupID), jsonString(clientID))));
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
  // The client row takes the pending version; a trigger on it appends the commit marker.
  execStatement(
    RECORD_PROCESSED,
    "[" + jsonString(groupID) + "," + jsonString(clientID) + "," + id.toString() + "]",
  );
}
