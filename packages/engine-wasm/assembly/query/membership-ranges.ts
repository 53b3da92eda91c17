// Evaluations that add a query's rows without a diff, as they are new to it: a range of its root's
// key (ranges.ts), the whole query when it holds few rows, a page of a window's order
// (window-bound.ts). Each counts toward the pull's rows and the query's work budget as a whole
// evaluation does.
import { exec, queryRows } from "../host";
import { pageEnd } from "../keyset-window";
import { params } from "../text";
import { meteredCall, meterQuery, querySpent } from "./limits";
import { Membership } from "./membership";
import { QueryNode } from "./plan";
import { RANGE_ROWS } from "./ranges";
import { RootSql, rangesShareRows } from "./root-sql";
import { QuerySql } from "./sql";
import { PART_ALL, PART_NULLS, PART_VALUES, WindowBound } from "./window-bound";

/**
 * Root rows the group's query's next range (or page, or first read whole) reads (`group`, `hash`:
 * JSON parameters): RANGE_ROWS, or fewer on a metered call where the host's pulls found its
 * ranges passing their step's budget (the
 * `_weir_range_rows` SQL function, the loader's RangeSizes). Called just before the range's
 * evaluation begins, which the host then times as a range.
 */
export function rangeRows(group: string, hash: string): i32 {
  if (!meteredCall()) return RANGE_ROWS;
  return I32.parseInt(queryRows("SELECT _weir_range_rows(?, ?)", params([group, hash]))[0][0], 10);
}

/**
 * Adds the rows the query holds among those of its table after the key `after` (a JSON array;
 * "" from the first) and up to `rangeRows` rows of it, in key order. Answers the last key the
 * range read, or "" when the table ended within it (then the query is evaluated whole). Its
 * work budget counts the ms its earlier ranges `spent` too.
 */
export function evaluateRange(
  m: Membership,
  hash: string,
  plan: QueryNode,
  after: string,
  spent: f64,
): string {
  const endParams: string[] = [];
  const ends = queryRows(pageEnd(plan.table, after, rangeRows(m.group, hash), endParams), params(endParams));
  const end = ends.length > 0 ? ends[0][0] : "";
  const kind = m.nextKind();
  // Its work budget counts the statement that evaluates it, as a whole evaluation's does.
  meterQuery(m.group, hash, spent);
  const found = findRows(m, hash, plan, after, end, "", kind);
  m.spent = querySpent();
  m.addFound(hash, kind, found);
  return end;
}

/**
 * Evaluates a plan read in ranges (root-sql.ts, `rangedPlan`) afresh whole when its root holds
 * at most `most` rows, adding its rows; answers whether it did (else it holds none yet: it is
 * read in ranges, ranges.ts).
 */
export function evaluateUpTo(m: Membership, hash: string, plan: QueryNode, most: i32): bool {
  meterQuery(m.group, hash);
  const kind = m.nextKind();
  if (plan.related.length > 0) {
    // Its root's rows are counted first: the statement with its related rows reads them all
    // before any related row, a LIMIT would not stop it early.
    const count = new RootSql(m.visibility);
    const text =
      "SELECT count(*) FROM (" + count.rangeRows(plan, "", "") + " LIMIT " + (most + 1).toString() + ")";
    if (I64.parseInt(queryRows(text, params(count.params))[0][0], 10) > <i64>most) return false;
    m.addFound(hash, kind, findRows(m, hash, plan, "", "", "", kind));
    return true;
  }
  const found = findRows(m, hash, plan, "", "", " LIMIT " + (most + 1).toString(), kind);
  if (found > <i64>most) {
    m.evaluated -= found;
    exec("DELETE FROM _weir_query_scratch WHERE kind = ?", params([kind]));
    return false;
  }
  m.addFound(hash, kind, found);
  return true;
}

/**
 * Puts the plan's rows between the keys `after` and `through` (ranges.ts) in scratch kind `kind`;
 * answers how many. With related subqueries, those of its root's rows there too, less the rows
 * the query holds already (related to a root row of an earlier range as well).
 */
function findRows(
  m: Membership,
  hash: string,
  plan: QueryNode,
  after: string,
  through: string,
  limit: string,
  kind: string,
): i64 {
  if (plan.related.length == 0) {
    const sql = new RootSql(m.visibility);
    return m.scratchRows(sql.rangeRows(plan, after, through) + limit, sql.params, kind);
  }
  const sql = new QuerySql(m.visibility);
  sql.rootAfter = after;
  sql.rootThrough = through;
  sql.held(plan, null, null);
  const found = m.scratchRows("SELECT t, k FROM (" + sql.heldStatement() + ")" + limit, sql.params, kind);
  return after.length == 0 || !rangesShareRows(plan) ? found : found - m.dropHeld(hash, kind);
}

/**
 * Adds the rows a window holds after its `bound` (window-bound.ts; from its first when `first`),
 * `most` of them at most, in its order, and moves the bound to the last. Answers how many it
 * added: fewer than `most` when the window's rows ended. Its work budget counts the ms its
 * earlier pages `spent` too.
 */
export function evaluatePage(
  m: Membership,
  hash: string,
  plan: QueryNode,
  bound: WindowBound,
  first: bool,
  most: i32,
  spent: f64,
): i64 {
  const kind = m.nextKind();
  meterQuery(m.group, hash, spent);
  const after: WindowBound | null = first ? null : bound;
  // Where the rows after the bound lie in two ranges of the order's index, each is read in turn
  // (window-bound.ts, `lead`): the values, then the NULLs.
  const split = after != null && bound.split(plan);
  bound.part = split ? PART_VALUES : PART_ALL;
  let found = pageRows(m, plan, after, most, kind);
  let endOffset = found == <i64>most ? most - 1 : -1;
  if (split && found < <i64>most) {
    bound.part = PART_NULLS;
    const nulls = pageRows(m, plan, after, most - <i32>found, kind);
    if (nulls > 0 && found + nulls == <i64>most) endOffset = <i32>nulls - 1;
    found += nulls;
  }
  if (endOffset >= 0) {
    const end = new RootSql(m.visibility);
    bound.moveTo(plan, end.windowEnd(plan, after, endOffset), end.params);
  }
  bound.part = PART_ALL;
  m.spent = querySpent();
  m.addFound(hash, kind, found);
  return found;
}

/** Puts `most` rows of the window after `after` (null: from its first) in scratch kind `kind`; answers how many. */
function pageRows(m: Membership, plan: QueryNode, after: WindowBound | null, most: i32, kind: string): i64 {
  const sql = new RootSql(m.visibility);
  return m.scratchRows(sql.windowRows(plan, after) + " LIMIT " + most.toString(), sql.params, kind);
}
