// A query evaluated afresh in ranges of its root's key. A query without a limit or EXISTS
// (root-sql.ts, `rangedPlan`) holds the rows of its root's table that pass its conditions and the
// related rows of each, and a range of that table's keys can be evaluated alone, with its related
// rows (a related row of root rows in two ranges is held once). On a
// metered pull such a query's fresh evaluation (a new query, a reset's, a deferred one's turn)
// reads its table RANGE_ROWS rows at a time, in key order, each range a step of the answer's
// pace (limits.ts), unless it holds at most RANGE_ROWS rows: it is first read whole until more are
// found (a query of a few rows of a large table would otherwise read every range of it; 100
// point queries of a 20,000-row table took 316 ms so, 49 to 72 ms read whole). Once the answer
// has no time left, the query waits deferred (deferred.ts),
// keeping the rows of its ranges so far, and its next turn goes on after the last key read. So
// no query of thousands of rows is one step. Writes before its turn bring its rows up to date up
// to that key (the rows past it are read when their range comes): a root alone among the changed
// rows, a query with related subqueries among the rows the writes can have moved
// (subtree-upkeep.ts; past what a step brings up to date, its ranges start over: evaluations.ts,
// `catchUp`). Its rows count toward the
// pull's `maxQueryRows` across its ranges, and their time toward its work budget (`spent`: the
// pull whose range passes it is refused).
//
// A window of more than RANGE_ROWS rows (a limit, no relation or EXISTS) is read alike in pages of
// its order (window-bound.ts): its state here is the same but for `after`, "[]", as it goes on
// after its bound.
import { RANGE_ROWS as ABI_RANGE_ROWS } from "../../src/abi";
import { exec } from "../host";
import { jsonString, params, parseI64 } from "../text";
import { windowBoundsSql } from "./window-bound";

/**
 * Rows of the root's table a range reads, unless the host answers fewer for the query, where its
 * ranges passed their step's budget (membership-ranges.ts, `rangeRows`).
 */
export const RANGE_ROWS: i32 = ABI_RANGE_ROWS;

export function rangesSql(): Array<string> {
  return [
    // The query's ranges so far: the last key they read (a JSON array), the rows they held and
    // the ms their evaluations took (its work budget counts them all).
    "CREATE TABLE IF NOT EXISTS _weir_query_ranges (group_id TEXT NOT NULL, hash TEXT NOT NULL, after TEXT NOT NULL, " +
      "held INTEGER NOT NULL, spent REAL NOT NULL, PRIMARY KEY (group_id, hash)) WITHOUT ROWID",
    // A window read in pages of its order goes on after its bound (window-bound.ts).
    windowBoundsSql(),
  ];
}

/**
 * Where the group's query `hash` (JSON parameters) goes on: after the key `after`, having held
 * `held` rows in `spent` ms.
 */
export function noteRange(group: string, hash: string, after: string, held: i64, spent: f64): void {
  exec(
    "INSERT INTO _weir_query_ranges (group_id, hash, after, held, spent) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO " +
      "UPDATE SET after = excluded.after, held = excluded.held, spent = excluded.spent",
    params([group, hash, jsonString(after), held.toString(), spent.toString()]),
  );
}

/**
 * The query's evaluation in ranges is done, or starts over. (A window's bound stays: it holds the
 * rows up to it, whatever the evaluation that put them there. Membership.release forgets it.)
 */
export function forgetRange(group: string, hash: string): void {
  exec("DELETE FROM _weir_query_ranges WHERE group_id = ? AND hash = ?", params([group, hash]));
}

/** Every query of the group starts over, holding no rows. */
export function forgetRanges(group: string): void {
  exec("DELETE FROM _weir_query_ranges WHERE group_id = ?", params([group]));
  exec("DELETE FROM _weir_query_bounds WHERE group_id = ?", params([group]));
}

/** Where a query's ranges stand: the last key read ("" before the first), the rows held, the ms spent. */
export class RangeState {
  constructor(
    public after: string = "",
    public held: i64 = 0,
    public spent: f64 = 0,
  ) {}

  /** Whether some of the query's ranges were evaluated (then it holds their rows). */
  started(): bool {
    return this.after.length > 0;
  }
}

/** The ranges state of a deferred query as `deferredQueries` reads it ("" columns: none). */
export function rangeState(after: string, held: string, spent: string): RangeState {
  return after.length == 0 ? new RangeState() : new RangeState(after, parseI64(held), F64.parseFloat(spent));
}
