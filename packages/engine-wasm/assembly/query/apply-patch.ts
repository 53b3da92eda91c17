// A pull's query patch applied to its group's stored queries: each `put` stored (within the
// group's caps) and evaluated, or deferred past the answer's time; each `del` let go of; `clear`
// lets go of them all. A query's derived indexes are made when it is first put (indexes.ts).
import {
  COLUMN_SEPARATOR,
  QUERY_OP_CLEAR,
  QUERY_OP_DEL,
  QUERY_OP_VERSION,
  ROW_SEPARATOR,
} from "../../src/abi";
import { exec, queryRows } from "../host";
import { Schema } from "../schema";
import { extraParam, params } from "../text";
import { defer, undefer, undeferAll } from "./deferred";
import { evaluateFresh } from "./evaluations";
import { ensureIndexes } from "./indexes";
import { AnswerPace, GroupCaps } from "./limits";
import { Membership } from "./membership";
import { QueryNode, readPlan } from "./plan";
import { StoredQuery, storedQueries } from "./stored";

/**
 * Applies the patch; answers "" or why it is refused (a cap of the group's queries). With
 * `pace` (an incremental pull: `evaluate`), a new query evaluated once the pull's steps have
 * run the answer's time is deferred instead (deferred.ts), holding no rows yet.
 */
export function applyPatch(
  schema: Schema,
  membership: Membership,
  group: string,
  patchText: string,
  evaluate: bool,
  pace: AnswerPace | null = null,
): string {
  if (patchText.length == 0) return "";
  const lines = patchText.split(ROW_SEPARATOR);
  const caps = new GroupCaps(group);
  const indexed = new Set<string>();
  for (let i = 0; i < lines.length; i++) {
    const fields = lines[i].split(COLUMN_SEPARATOR);
    if (fields[0] == QUERY_OP_VERSION) continue;
    if (fields[0] == QUERY_OP_CLEAR) {
      const queries = storedQueries(group);
      for (let q = 0; q < queries.length; q++) membership.release(queries[q].hash);
      exec("DELETE FROM _weir_queries WHERE group_id = ?", params([group]));
      undeferAll(group);
      caps.cleared();
      continue;
    }
    const hash = extraParam(I32.parseInt(fields[1], 10));
    if (fields[0] == QUERY_OP_DEL) {
      membership.release(hash);
      caps.deleting(hash);
      exec("DELETE FROM _weir_queries WHERE group_id = ? AND hash = ?", params([group, hash]));
      undefer(group, hash);
      continue;
    }
    // A query the group holds already is kept as it is.
    const added = exec(
      "INSERT INTO _weir_queries (group_id, hash, name, args, plan, tables) VALUES (?, ?, ?, ?, ?, ?) " +
        "ON CONFLICT DO NOTHING",
      params([
        group,
        hash,
        extraParam(I32.parseInt(fields[2], 10)),
        extraParam(I32.parseInt(fields[3], 10)),
        extraParam(I32.parseInt(fields[4], 10)),
        extraParam(I32.parseInt(fields[5], 10)),
      ]),
    );
    if (added == 0) continue;
    const refused = caps.added(extraParam(I32.parseInt(fields[3], 10)));
    if (refused.length > 0) return refused;
    const plan = queryRows(
      "SELECT plan, name FROM _weir_queries WHERE group_id = ? AND hash = ?",
      params([group, hash]),
    );
    const node: QueryNode = readPlan(plan[0][0], schema);
    ensureIndexes(node, indexed, plan[0][1]);
    if (!evaluate || membership.exceeded()) continue;
    if (pace != null && !pace.fits) {
      defer(group, hash);
      continue;
    }
    if (pace == null) membership.evaluate(hash, plan[0][0], true);
    else evaluateFresh(membership, group, new StoredQuery(hash, plan[0][0], ""), node, pace);
  }
  return "";
}
