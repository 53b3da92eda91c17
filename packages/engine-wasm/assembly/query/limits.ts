// What the host allows one pull's queries: whether it meters their work (it defined the SQL
// functions below on its driver), and how many queries, and bytes of their arguments, one
// group may hold. Set by the loader before each pull, inside its call.
import { queryRows } from "../host";
import { ident, params } from "../text";
import { QueryNode } from "./plan";

/** Whether this call's query evaluations are metered. */
let metered = false;
let maxGroupQueries: i64 = I64.MAX_VALUE;
let maxGroupQueryBytes: i64 = I64.MAX_VALUE;
let nameComplete = true;

export function setQueryLimits(meter: bool, maxQueries: i64, maxArgBytes: i64, complete: bool): void {
  metered = meter;
  maxGroupQueries = maxQueries;
  maxGroupQueryBytes = maxArgBytes;
  nameComplete = complete;
}

/**
 * Whether this call's answer names the group's complete queries (`gotQueries`). A step of a
 * sliced pull before its last does not: no client sees its answer, and while rows are owed the
 * names cost a read of every complete query's rows, in every step.
 */
export function namesCompleteQueries(): bool {
  return nameComplete;
}

/** Whether this call's query evaluations are metered (the host's SQL functions are defined). */
export function meteredCall(): bool {
  return metered;
}

/**
 * The pace of an answer's steps (a query's evaluation, a page of rows), where the call is
 * metered: each step is timed by the host's clock (`_weir_answer_left`, the ms the call's
 * answer has left), and the next fits only if, at the last one's pace, it would end within the
 * answer's time. The caller always takes its first step, so every answer makes progress.
 */
export class AnswerPace {
  private before: f64 = 0;
  /** Whether another step fits, as the last step to end said (true before any). */
  fits: bool = true;
  /** Steps taken. */
  steps: i32 = 0;

  /** A step begins. */
  start(): void {
    this.steps++;
    if (metered) this.before = answerLeft();
  }

  /** The step ended: answers whether another, as long, fits. */
  another(): bool {
    if (!metered) return true;
    const left = answerLeft();
    this.fits = left > this.before - left;
    return this.fits;
  }
}

function answerLeft(): f64 {
  return F64.parseFloat(queryRows("SELECT _weir_answer_left()")[0][0]);
}

/**
 * The term an EXISTS probe, or a root without one, tests first, for every row it examines, and
 * so does a related subquery or an EXISTS witness: the host counts them, and fails the
 * statement once the query's evaluation has passed its budget.
 * A probe is where a query's work can grow faster than its tables (a probe per row of the
 * parent); a root without probes costs a scan of its table at most, which a large table makes
 * long too. The argument ties the term to the node's own table, so SQLite tests it inside that
 * table's loop.
 */
export function workTerm(node: QueryNode, alias: string): string {
  if (!metered) return "";
  return "_weir_work(" + alias + "." + ident(node.table.primaryKey[0].name) + ") AND ";
}

/**
 * Tells the host which query the next statements evaluate (`group`, `hash`: JSON parameters):
 * its step's budget starts anew, its total's less the ms it `spent` in earlier pulls (a query
 * evaluated in ranges or pages: ranges.ts), and a refusal names it.
 */
export function meterQuery(group: string, hash: string, spent: f64 = 0): void {
  if (!metered) return;
  queryRows(
    "SELECT _weir_query(?, (SELECT name FROM _weir_queries WHERE group_id = ? AND hash = ?), ?)",
    params([hash, group, hash, spent.toString()]),
  );
}

/** The ms the query being evaluated has spent, its earlier pulls' included (0 where unmetered). */
export function querySpent(): f64 {
  if (!metered) return 0;
  return F64.parseFloat(queryRows("SELECT _weir_query_spent()")[0][0]);
}

/**
 * A group's queries and the bytes of their stored arguments, kept as a patch changes them: a put
 * that would pass either cap is refused before its query is evaluated.
 */
export class GroupCaps {
  count: i64 = 0;
  bytes: i64 = 0;

  constructor(private group: string) {
    const totals = queryRows(
      "SELECT count(*), coalesce(sum(length(CAST(args AS BLOB))), 0) FROM _weir_queries WHERE group_id = ?",
      params([group]),
    );
    this.count = I64.parseInt(totals[0][0], 10);
    this.bytes = I64.parseInt(totals[0][1], 10);
  }

  cleared(): void {
    this.count = 0;
    this.bytes = 0;
  }

  /** Before the query `hash` is deleted. */
  deleting(hash: string): void {
    const found = queryRows(
      "SELECT length(CAST(args AS BLOB)) FROM _weir_queries WHERE group_id = ? AND hash = ?",
      params([this.group, hash]),
    );
    if (found.length == 0) return;
    this.count--;
    this.bytes -= I64.parseInt(found[0][0], 10);
  }

  /** After a put added a query whose stored arguments are `args` (a JSON parameter): "" or why it is refused. */
  added(args: string): string {
    this.count++;
    this.bytes += I64.parseInt(queryRows("SELECT length(CAST(? AS BLOB))", params([args]))[0][0], 10);
    if (this.count > maxGroupQueries) {
      return (
        "the group would hold more than " +
        maxGroupQueries.toString() +
        " queries (the server's maxGroupQueries): delete some before putting others"
      );
    }
    if (this.bytes > maxGroupQueryBytes) {
      return (
        "the group's queries would store more than " +
        maxGroupQueryBytes.toString() +
        " bytes of arguments (the server's maxGroupQueryBytes)"
      );
    }
    return "";
  }
}
