import type { RowPatchOp, ZeroPokeQueryOp } from "@weir/protocol";
import type { PokeContent, ZeroPokePart } from "./zero-group.js";

/** A native query-aware pull's answer, as the dialect reads it. */
export interface QueryPullAnswer {
  cookie: number;
  unchanged?: boolean;
  lastMutationIDChanges?: Record<string, number>;
  gotQueries?: string[];
  rowsPatch?: RowPatchOp[];
}

/** How many row ops one pokePart carries at most: a big catch-up spans several parts. */
const ROWS_PER_PART = 1_000;

/**
 * The bodies of a poke's parts (without pokeID), or null when it would change nothing. A pull
 * answered at a newer version than the clients' is always poked, even empty: the engine keeps the
 * group's membership at that version, and the clients' cookie must follow it.
 */
export function pokeParts(
  answer: QueryPullAnswer,
  full: boolean,
  moved: boolean,
  got: Set<string>,
  content: PokeContent,
): ZeroPokePart[] | null {
  const rows = (answer.rowsPatch ?? []).filter((op) => op.op !== "clear");
  const gotPatch = gotQueriesPatch(answer, full, got);
  const lmids = answer.lastMutationIDChanges ?? {};
  const first: ZeroPokePart = {};
  if (Object.keys(lmids).length > 0) first.lastMutationIDChanges = lmids;
  if (Object.keys(content.desired).length > 0) first.desiredQueriesPatches = content.desired;
  if (gotPatch.length > 0) first.gotQueriesPatch = gotPatch;
  if (content.results.length > 0) first.mutationsPatch = content.results;
  if (!full && !moved && rows.length === 0 && Object.keys(first).length === 0) return null;
  const parts: ZeroPokePart[] = [];
  // A clear empties the client's whole store (its desired and got queries too), so it comes in
  // a part of its own, before the part that puts them back.
  if (full) parts.push({ rowsPatch: [{ op: "clear" }] });
  first.rowsPatch = rows.slice(0, ROWS_PER_PART);
  parts.push(first);
  for (let at = ROWS_PER_PART; at < rows.length; at += ROWS_PER_PART) {
    parts.push({ rowsPatch: rows.slice(at, at + ROWS_PER_PART) });
  }
  return parts;
}

/** The got-queries change from what the clients hold to the engine's complete set; updates `got`. */
function gotQueriesPatch(answer: QueryPullAnswer, full: boolean, got: Set<string>): ZeroPokeQueryOp[] {
  if (answer.gotQueries === undefined) return [];
  const now = new Set(answer.gotQueries);
  const patch: ZeroPokeQueryOp[] = [];
  if (full) got.clear();
  for (const hash of got) {
    if (!now.has(hash)) {
      patch.push({ op: "del", hash });
      got.delete(hash);
    }
  }
  for (const hash of now) {
    if (!got.has(hash)) {
      patch.push({ op: "put", hash });
      got.add(hash);
    }
  }
  return patch;
}
