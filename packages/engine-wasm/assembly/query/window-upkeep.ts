// A window read in pages of its order (window-bound.ts) kept up to date after writes among the
// changed rows alone, as a query without a limit is, instead of evaluated whole. It holds every
// row that passes its conditions up to its bound, and exactly `limit` of them (or, with no bound,
// every row that passes, fewer). A row no write changed keeps its place in the order and whether
// it passes, so after writes the rows up to the bound are those it held that no write changed
// and the changed rows that now pass up to it. Then, holding more than its limit, it lets go of
// the last ones, and its bound moves back to the last it keeps; holding fewer, it reads on after
// its bound as its pages did (and holding every row that passes once they end). Each step reads
// about as many rows as the writes changed, so a window of thousands of rows costs a write what a
// window of a few does.
import { ChangeScope } from "../change-keys";
import { Membership } from "./membership";
import { evaluatePage } from "./membership-ranges";
import { QueryNode } from "./plan";
import { RootSql } from "./root-sql";
import { KEPT_ALL, PART_ALL, PART_NULLS, PART_VALUES, WindowBound } from "./window-bound";

/**
 * Brings the group's window `hash` (JSON parameters) up to date with the changes in [from, to)
 * (sequence numbers) that `scope` reads, from what its bound keeps (`kept`: KEPT_ALL or
 * KEPT_BOUND).
 */
export function refreshWindow(
  membership: Membership,
  group: string,
  hash: string,
  plan: QueryNode,
  kept: i32,
  from: i64,
  to: i64,
  scope: ChangeScope,
): void {
  const bound = new WindowBound(group, hash);
  const upTo: WindowBound | null = kept == KEPT_ALL ? null : bound;
  membership.evaluateChanged(hash, plan, from, to, scope, "", upTo);
  // Up to a bound it held its limit; with none, fewer: as many rows still, or fewer with none, it
  // needs no more (and its rows need not be counted).
  const grown = membership.grown;
  if (upTo != null ? grown == 0 : grown <= 0) return;
  const limit = I64.parseInt(plan.limit, 10);
  const held = membership.heldRows(hash);
  if (held > limit) trim(membership, hash, plan, bound, upTo, <i32>(held - limit));
  else if (held < limit && upTo != null) {
    const most = <i32>(limit - held);
    if (evaluatePage(membership, hash, plan, bound, false, most, 0) < <i64>most) bound.keepAll();
  }
}

/**
 * Lets go of the window's `over` last rows, in its order, and moves its bound back to the row
 * before them (both read up to the bound before it moves, `upTo`; null: every row that passes).
 * Where those rows lie in two ranges of the order's index (window-bound.ts, `lead`), the values
 * are read first, then the NULLs.
 */
function trim(
  membership: Membership,
  hash: string,
  plan: QueryNode,
  bound: WindowBound,
  upTo: WindowBound | null,
  over: i32,
): void {
  const split = upTo != null && bound.split(plan, true);
  bound.part = split ? PART_VALUES : PART_ALL;
  const gone = <i32>letGoLast(membership, hash, plan, upTo, over);
  // The row before them: among the values, unless those ran out (then among the NULLs).
  if (!split || gone < over || !moveBack(membership, plan, bound, upTo, over)) {
    if (split) bound.part = PART_NULLS;
    if (gone < over) letGoLast(membership, hash, plan, upTo, over - gone);
    moveBack(membership, plan, bound, upTo, split ? over - gone : over);
  }
  bound.part = PART_ALL;
}

function letGoLast(
  membership: Membership,
  hash: string,
  plan: QueryNode,
  upTo: WindowBound | null,
  rows: i32,
): i64 {
  const last = new RootSql(membership.visibility);
  return membership.letGo(hash, last.windowRows(plan, upTo, true) + " LIMIT " + rows.toString(), last.params);
}

function moveBack(
  membership: Membership,
  plan: QueryNode,
  bound: WindowBound,
  upTo: WindowBound | null,
  offset: i32,
): bool {
  const end = new RootSql(membership.visibility);
  return bound.moveTo(plan, end.windowEnd(plan, upTo, offset, true), end.params);
}
