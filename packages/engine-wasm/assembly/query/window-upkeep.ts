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
import { KEPT_ALL, WindowBound } from "./window-bound";

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
  if (held > limit) {
    const over = <i32>(held - limit);
    // The last rows it holds, in its order, are let go of; its bound moves back to the row before
    // them (both read before it moves).
    const last = new RootSql(membership.visibility);
    membership.letGo(hash, last.windowRows(plan, upTo, true) + " LIMIT " + over.toString(), last.params);
    const end = new RootSql(membership.visibility);
    bound.moveTo(plan, end.windowEnd(plan, upTo, over, true), end.params);
  } else if (held < limit && upTo != null) {
    const most = <i32>(limit - held);
    if (evaluatePage(membership, hash, plan, bound, false, most, 0) < <i64>most) bound.keepAll();
  }
}
