// The evaluations a query-aware pull runs at the answer's pace (limits.ts, AnswerPace): a query's
// fresh evaluation, whole or in ranges of its root's key (ranges.ts), and the re-evaluations that
// writes since the group's cookie call for. Past the answer's time a query waits deferred
// (deferred.ts), keeping the rows it may keep.

import { ChangeScope } from "../change-keys";
import { queryRows } from "../host";
import { Schema } from "../schema";
import { firstSeq } from "../state";
import { params } from "../text";
import { affected, touchedTables } from "./affected";
import { defer } from "./deferred";
import { AnswerPace, meteredCall, meterQuery, querySpent } from "./limits";
import { Membership } from "./membership";
import { evaluatePage, evaluateRange, evaluateUpTo, rangeRows } from "./membership-ranges";
import { Drops } from "./patch-drops";
import { QueryNode, readPlan } from "./plan";
import { forgetRange, noteRange, RANGE_ROWS, RangeState } from "./ranges";
import { changedRowsPlan, pagedWindowPlan, rangedPlan } from "./root-sql";
import { StoredQuery } from "./stored";
import { refreshSubtrees, subtreePlan } from "./subtree-upkeep";
import { UPKEEP_AGAIN, UPKEEP_ROWS, UPKEEP_WHOLE, upkeepWay } from "./upkeep-way";
import { KEPT_NONE, WindowBound } from "./window-bound";
import { refreshWindow } from "./window-upkeep";

/**
 * Evaluates the group's query afresh while the answer has time (`pace`): in ranges of its root's
 * key where its plan allows and the call is metered (ranges.ts), going on from where the query's
 * ranges stand (an unmetered call too, then to the end), else whole. Answers whether it is done;
 * if not, it waits deferred, keeping the rows of its ranges so far.
 */
export function evaluateFresh(
  membership: Membership,
  group: string,
  query: StoredQuery,
  plan: QueryNode,
  pace: AnswerPace,
): bool {
  pace.start();
  const window = pagedWindowPlan(plan, RANGE_ROWS);
  if (!(window || rangedPlan(plan)) || (!meteredCall() && !query.range.started())) {
    membership.evaluate(query.hash, query.plan, true);
    pace.another();
    return true;
  }
  if (window) return evaluatePages(membership, group, query, plan, pace);
  let after = query.range.after;
  // A query lent whole, or holding fewer rows than a range reads, is done in one step (a query
  // of a few rows of a large table would otherwise read every range of it).
  if (
    after.length == 0 &&
    (membership.lend(query.hash, query.plan, plan) ||
      evaluateUpTo(membership, query.hash, plan, rangeRows(group, query.hash)))
  ) {
    pace.another();
    return true;
  }
  // The rows of its ranges so far count toward the pull's budget with those of the ranges after.
  // So do their ms toward its work budget.
  let held = query.range.held;
  let spent = query.range.spent;
  for (;;) {
    const before = membership.evaluated;
    after = evaluateRange(membership, query.hash, plan, after, spent);
    spent = membership.spent;
    held += membership.evaluated - before;
    if (held > membership.budget) membership.overBudget = true;
    pace.another();
    if (after.length == 0 || !pace.fits || membership.exceeded()) break;
    pace.start();
  }
  return leave(group, query.hash, after.length == 0, after, held, spent);
}

/**
 * Ends a turn of a query read in ranges or pages: forgets where they stand when it is `done`,
 * else defers it, keeping their rows and noting where the next goes on. Answers `done`.
 */
function leave(group: string, hash: string, done: bool, after: string, held: i64, spent: f64): bool {
  if (done) {
    forgetRange(group, hash);
    return true;
  }
  defer(group, hash, true);
  noteRange(group, hash, after, held, spent);
  return false;
}

/**
 * Evaluates a window afresh in pages of its order (window-bound.ts) while the answer has time,
 * going on after its bound; as `evaluateFresh`.
 */
function evaluatePages(
  membership: Membership,
  group: string,
  query: StoredQuery,
  plan: QueryNode,
  pace: AnswerPace,
): bool {
  const started = query.range.started();
  if (!started && membership.lend(query.hash, query.plan, plan)) {
    pace.another();
    return true;
  }
  const limit = I64.parseInt(plan.limit, 10);
  const bound = new WindowBound(group, query.hash);
  // The rows its pages so far hold, brought up to date with the writes since (pull.ts).
  let held = started ? membership.heldRows(query.hash) : 0;
  let spent = query.range.spent;
  let first = !started;
  let done = false;
  for (;;) {
    if (held >= limit) {
      // Writes between its pages put more rows before its bound than the window holds: it is
      // evaluated whole, once.
      if (held > limit) membership.evaluate(query.hash, query.plan);
      done = true;
    } else {
      const most = <i32>min<i64>(<i64>rangeRows(group, query.hash), limit - held);
      const found = evaluatePage(membership, query.hash, plan, bound, first, most, spent);
      first = false;
      spent = membership.spent;
      held += found;
      if (held > membership.budget) membership.overBudget = true;
      done = found < <i64>most || held == limit;
      // Its rows ended before its limit: it holds every row that passes.
      if (found < <i64>most) bound.keepAll();
    }
    pace.another();
    if (done || !pace.fits || membership.exceeded()) break;
    pace.start();
  }
  // A window's pages go on after its bound, not a key: "[]".
  return leave(group, query.hash, done, "[]", held, spent);
}

/** The changes a pull reads: those with seqs in [fromSeq, toSeq), and the tables they touched. */
export class Changes {
  touched: Array<string>;
  fromSeq: i64;
  toSeq: i64;

  constructor(base: i64, watermark: i64, scope: ChangeScope) {
    this.touched = touchedTables(base, watermark, scope);
    this.fromSeq = firstSeq(base + 1);
    this.toSeq = firstSeq(watermark + 1);
  }
}

/**
 * Brings the rows of the group's `waiting` queries read in ranges so far up to date with the
 * `changes` that `scope` reads, before a range adds more: those up to the last key their ranges
 * read (ranges.ts), or a window's bound (window-bound.ts); with related subqueries, among the
 * rows the changes can have moved below its root rows so far (subtree-upkeep.ts). The queries the
 * pull's patch deletes (`drops`) are passed over.
 */
export function catchUp(
  schema: Schema,
  membership: Membership,
  group: string,
  waiting: Array<StoredQuery>,
  changes: Changes,
  scope: ChangeScope,
  drops: Drops,
): void {
  for (let q = 0; q < waiting.length; q++) {
    const query = waiting[q];
    if (!query.range.started() || !query.readsAny(changes.touched) || drops.has(query.hash)) continue;
    const plan = readPlan(query.plan, schema);
    if (plan.related.length > 0) {
      catchUpRelated(membership, group, query, plan, changes, scope);
      continue;
    }
    const window = pagedWindowPlan(plan, RANGE_ROWS);
    membership.evaluateChanged(
      query.hash,
      plan,
      changes.fromSeq,
      changes.toSeq,
      scope,
      window ? "" : query.range.after,
      window ? new WindowBound(group, query.hash) : null,
    );
  }
}

/**
 * A query with related subqueries read in ranges so far, brought up to date under the root rows
 * of its ranges among the rows the changes can have moved (subtree-upkeep.ts), when they can
 * affect it. Its work budget counts it with its ranges, and its rows budget the rows it then holds.
 */
function catchUpRelated(
  membership: Membership,
  group: string,
  query: StoredQuery,
  plan: QueryNode,
  changes: Changes,
  scope: ChangeScope,
): void {
  const from = changes.fromSeq.toString();
  const to = changes.toSeq.toString();
  if (!affected(plan, membership.key, query.hash, from, to, changes.touched, scope)) return;
  const range = query.range;
  if (upkeepWay(membership.key, query.hash, plan, changes.fromSeq, changes.toSeq) != UPKEEP_ROWS) {
    readAgain(membership, group, query);
    return;
  }
  meterQuery(group, query.hash, range.spent);
  refreshSubtrees(membership, query.hash, plan, changes.fromSeq, changes.toSeq, scope, range.after);
  range.spent = querySpent();
  range.held = membership.heldRows(query.hash);
  noteRange(group, query.hash, range.after, range.held, range.spent);
}

/**
 * After a change of claims, a query read in ranges or pages on a metered call (`readInParts`) lets
 * go of its rows and is read again from its first range while the answer has time, waiting
 * deferred past it (evaluated whole, one statement, it could pass its step's budget, and would
 * again at every pull after, whose claims stay changed until one is answered). A row it held
 * and holds again in this pull is not sent: a query of a range or two changes in one answer, and
 * a larger one's other rows are deleted until their range comes. Answers whether it is done.
 */
export function readAfresh(
  membership: Membership,
  group: string,
  query: StoredQuery,
  plan: QueryNode,
  pace: AnswerPace,
): bool {
  if (!pace.fits) {
    readAgain(membership, group, query);
    return false;
  }
  membership.release(query.hash);
  forgetRange(group, query.hash);
  query.keeps = false;
  query.range = new RangeState();
  if (evaluateFresh(membership, group, query, plan, pace)) return true;
  membership.readAgain = true;
  return false;
}

/** Whether the query's fresh evaluation on this call is read in ranges or pages (`evaluateFresh`). */
export function readInParts(plan: QueryNode): bool {
  return meteredCall() && (pagedWindowPlan(plan, RANGE_ROWS) || rangedPlan(plan));
}

/**
 * A query that writes changed too much of to bring up to date in a step (upkeep-way.ts,
 * UPKEEP_AGAIN) lets go of its rows and waits deferred, to be read again in ranges from the first.
 */
function readAgain(membership: Membership, group: string, query: StoredQuery): void {
  membership.release(query.hash);
  defer(group, query.hash);
  query.keeps = false;
  query.range = new RangeState();
  membership.readAgain = true;
}

/**
 * Brings the group's `queries` up to date with the `changes` that `scope` reads: each query they
 * affect is re-evaluated while the answer has time (`pace`), among the changed rows alone where
 * its plan allows (even past that time: the cost is the changed rows, which the answer reads
 * anyway), and deferred past it otherwise. Of the `waiting` queries, those evaluated in this
 * pull (before `done`) and those read in ranges are up to date; each other that keeps rows lets
 * go of those the changes reach. The queries the pull's patch deletes (`drops`) are passed over.
 * Answers how many queries it re-evaluated.
 */
export function refresh(
  schema: Schema,
  membership: Membership,
  group: string,
  key: string,
  queries: Array<StoredQuery>,
  changes: Changes,
  scope: ChangeScope,
  waiting: Array<StoredQuery>,
  done: i32,
  pace: AnswerPace,
  drops: Drops,
): i32 {
  const touched = changes.touched;
  const from = changes.fromSeq.toString();
  const to = changes.toSeq.toString();
  // A deferred query is evaluated whole when its turn comes, not brought up to date.
  const skipped = new Map<string, bool>();
  for (let q = 0; q < waiting.length; q++) {
    const query = waiting[q];
    skipped.set(query.hash, q >= done && query.keeps && !query.range.started());
  }
  let recomputed = 0;
  for (let q = 0; q < queries.length && !membership.exceeded(); q++) {
    const query = queries[q];
    if (!query.readsAny(touched) || drops.has(query.hash)) continue;
    if (skipped.has(query.hash)) {
      if (skipped.get(query.hash))
        releaseChanged(schema, membership, query, touched, changes.fromSeq, changes.toSeq, scope);
      continue;
    }
    const plan = readPlan(query.plan, schema);
    if (!affected(plan, key, query.hash, from, to, touched, scope)) continue;
    // A query whose rows are each held by their own values, or a window its bound keeps
    // (window-upkeep.ts), is brought up to date among the changed rows alone, and one with
    // relations read in ranges among the rows the changes can have moved (subtree-upkeep.ts),
    // unless they are many (`upkeepWay`: then evaluated whole, or read again in ranges); any other
    // is evaluated whole and diffed, or deferred past the time.
    const changed = changedRowsPlan(plan);
    const way =
      !changed && subtreePlan(plan)
        ? upkeepWay(key, query.hash, plan, changes.fromSeq, changes.toSeq)
        : UPKEEP_WHOLE;
    if (way == UPKEEP_AGAIN) {
      readAgain(membership, group, query);
      continue;
    }
    const subtrees = !changed && subtreePlan(plan) && way == UPKEEP_ROWS;
    const kept =
      !changed && pagedWindowPlan(plan, RANGE_ROWS) ? new WindowBound(group, query.hash).kept() : KEPT_NONE;
    if (!pace.fits && !changed && !subtrees && kept == KEPT_NONE) {
      releaseChanged(schema, membership, query, touched, changes.fromSeq, changes.toSeq, scope);
      defer(group, query.hash, true);
      continue;
    }
    pace.start();
    if (changed) membership.evaluateChanged(query.hash, plan, changes.fromSeq, changes.toSeq, scope);
    else if (subtrees) {
      meterQuery(group, query.hash);
      refreshSubtrees(membership, query.hash, plan, changes.fromSeq, changes.toSeq, scope);
    } else if (kept != KEPT_NONE)
      refreshWindow(membership, group, query.hash, plan, kept, changes.fromSeq, changes.toSeq, scope);
    else membership.evaluate(query.hash, query.plan);
    recomputed++;
    pace.another();
  }
  return recomputed;
}

/**
 * A query the answer has no time left for, after a claims change: it lets go of its rows, any of
 * which the user may no longer see, and waits for the pulls after, holding none, as a reset's
 * deferred queries do (deferred.ts). Only a query that `holdsFew` rows is deferred: letting go
 * of a row costs about what evaluating it does, so one whose cost is its rows (a window of up
 * to 2,048; a larger one is read again in pages, `readAfresh`) is evaluated in place, and what
 * a deferral spares is the work of a query that examines much to hold little. (After writes, a
 * query left keeps the rows they did not change: `releaseChanged`.)
 */
export function deferOutOfTime(membership: Membership, group: string, hash: string): void {
  membership.release(hash);
  defer(group, hash);
}

/**
 * Lets go of the rows of the group's `query` that the changes in [from, to) (sequence numbers;
 * the tables they touched: `touched`) changed: a query deferred past the answer's time after
 * writes keeps only the rows they did not change (deferred.ts).
 */
function releaseChanged(
  schema: Schema,
  membership: Membership,
  query: StoredQuery,
  touched: Array<string>,
  from: i64,
  to: i64,
  scope: ChangeScope,
): void {
  for (let i = 0; i < touched.length; i++) {
    if (!query.readsAny([touched[i]])) continue;
    const table = schema.table(touched[i]);
    if (table != null) membership.releaseChanged(query.hash, table, from, to, scope);
  }
}

/** The rows a query may hold and still be deferred rather than evaluated past the answer's time. */
const DEFER_AT_MOST = 1_024;

/** Whether the group's query `hash` (JSON parameters) holds at most DEFER_AT_MOST rows. */
export function holdsFew(key: string, hash: string): bool {
  return (
    queryRows(
      "SELECT count(*) <= " +
        DEFER_AT_MOST.toString() +
        " FROM (SELECT 1 FROM _weir_query_rows WHERE group_key = ? AND hash = ? LIMIT " +
        (DEFER_AT_MOST + 1).toString() +
        ")",
      params([key, hash]),
    )[0][0] == "1"
  );
}
