import { EngineError } from "./engine-error.js";
import type { PullInput, SqlAdapter } from "./types.js";

/** What the caps read of a patch operation (a client's, or one resolved to an AST). */
type CappedOp = { op: "put"; hash: string; args?: unknown } | { op: "del"; hash: string } | { op: "clear" };

/**
 * Refuses, before anything is resolved or evaluated, a patch whose new queries alone pass a
 * group's caps (distinct hashes; the engine checks each put against what the group holds too).
 * A host that applies a patch in steps checks the whole of it with this first.
 */
export function checkPatchCaps(
  patch: readonly CappedOp[],
  caps: Pick<PullInput, "maxGroupQueries" | "maxGroupQueryBytes">,
): void {
  const max = caps.maxGroupQueries ?? Number.POSITIVE_INFINITY;
  const maxBytes = caps.maxGroupQueryBytes ?? Number.POSITIVE_INFINITY;
  // From the end, so each hash is counted once, by its last put, and the sums only grow: the
  // check stops at the put that passes a cap, having encoded at most a cap's worth of arguments
  // (a patch far past them costs no more than one at them).
  const seen = new Set<string>();
  let total = 0;
  for (let i = patch.length - 1; i >= 0; i--) {
    const op = patch[i]!;
    if (op.op !== "put" || seen.has(op.hash)) continue;
    seen.add(op.hash);
    if (seen.size > max) {
      throw new EngineError(
        "query_budget_exceeded",
        `the patch puts ${distinctPuts(patch)} queries, more than a group may hold (${max}, the server's maxGroupQueries)`,
      );
    }
    total += utf8Length(JSON.stringify(op.args ?? null));
    if (total > maxBytes) {
      throw new EngineError(
        "query_budget_exceeded",
        `the patch's queries store more than ${maxBytes} bytes of arguments, the most a group may hold (the server's maxGroupQueryBytes)`,
      );
    }
  }
}

/** The distinct hashes a patch puts. */
function distinctPuts(patch: readonly CappedOp[]): number {
  const hashes = new Set<string>();
  for (const op of patch) if (op.op === "put") hashes.add(op.hash);
  return hashes.size;
}

const NOT_ASCII = /[^ -~\t\n\r]/;
const encoder = new TextEncoder();

/** A string's length in UTF-8 (most arguments are ASCII: their length, without encoding them). */
function utf8Length(text: string): number {
  return NOT_ASCII.test(text) ? encoder.encode(text).length : text.length;
}

/** The caps a group's queries are held to, and whose group a patch is for. */
type GroupCapsInput = Pick<PullInput, "clientGroupID" | "userID" | "maxGroupQueries" | "maxGroupQueryBytes">;

/**
 * Refuses what the engine's pull refuses for the caps: a patch whose puts alone pass them
 * (`checkPatchCaps`), or that would take the group past them at any of its puts, counting the
 * queries the group holds now (a put of a query held already keeps it; a del or clear frees
 * its place), as the engine does while it applies the patch. A host that applies a patch in
 * steps checks it with this first, so that a patch refused for the caps changes nothing, not
 * only its later steps. A group that is not the user's holds nothing here (its pull is refused).
 */
export function checkGroupCaps(
  db: SqlAdapter,
  hasQueryTables: boolean,
  input: GroupCapsInput,
  patch: readonly CappedOp[],
): void {
  checkPatchCaps(patch, input);
  const max = input.maxGroupQueries ?? Number.POSITIVE_INFINITY;
  const maxBytes = input.maxGroupQueryBytes ?? Number.POSITIVE_INFINITY;
  if (max === Number.POSITIVE_INFINITY && maxBytes === Number.POSITIVE_INFINITY) return;
  const held = new Map<string, number>();
  if (hasQueryTables) {
    const rows = db.query(
      "SELECT q.hash, length(CAST(q.args AS BLOB)) FROM _weir_queries AS q JOIN _weir_client_groups AS g " +
        "ON g.id = q.group_id WHERE q.group_id = ? AND g.user_id = ?",
      [input.clientGroupID, input.userID],
    );
    for (const [hash, bytes] of rows) held.set(String(hash), Number(bytes));
  }
  let bytes = 0;
  for (const size of held.values()) bytes += size;
  for (const op of patch) {
    if (op.op === "clear") {
      held.clear();
      bytes = 0;
    } else if (op.op === "del") {
      bytes -= held.get(op.hash) ?? 0;
      held.delete(op.hash);
    } else if (!held.has(op.hash)) {
      const size = utf8Length(JSON.stringify(op.args ?? null));
      held.set(op.hash, size);
      bytes += size;
      if (held.size > max) {
        throw new EngineError(
          "query_budget_exceeded",
          `the group would hold more than ${max} queries (the server's maxGroupQueries): delete some before putting others`,
        );
      }
      if (bytes > maxBytes) {
        throw new EngineError(
          "query_budget_exceeded",
          `the group's queries would store more than ${maxBytes} bytes of arguments (the server's maxGroupQueryBytes)`,
        );
      }
    }
  }
}
