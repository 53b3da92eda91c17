// Queries a group holds whose rows are not built yet, or not up to date. A reset evaluates every
// query of the group, and a group may hold hundreds, each within its own work budget: together
// they would hold the thread for as long as all of them take. On a metered pull, once the call
// has run its answer's time (limits.ts, AnswerPace) after its first query, the reset leaves the
// rest deferred: stored, holding no rows, and named here. So do the new queries of a patch past
// that time, and a query read in ranges (ranges.ts) whose ranges it cut, which keeps their rows.
// The answer is then a part, as one cut by the caps is (rows still to come, no query named
// complete that is deferred, mutation ids held back), and each pull after it evaluates deferred
// queries before anything else, at least one, the longest waiting first (`turn`), until none are
// left. A deferred query is not re-evaluated for changes meanwhile: it is evaluated whole when its
// turn comes (a query read in ranges goes on from its last range, its rows brought up to date).
// A group with deferred queries lends no rows (lend.ts), and follows no other.
//
// A query that writes since the group's cookie leave out of the answer's time is deferred keeping
// its rows (`keeps`), but only those no write since has changed: each held row a write changes is
// let go of at once, by the write's pull and by every pull after it until the query's turn.
// Letting go of every row would cost what evaluating the query does (a window of thousands), and
// keeping a changed row could send values the user may no longer see. An unchanged row is one the
// client holds already, as it was when the query last held it, so keeping it sends nothing; the
// query's turn diffs it against what the query holds then. After a change of claims a query left
// lets go of every row instead (any could be one the new claims hide).
import { exec, queryRows } from "../host";
import { params } from "../text";
import { forgetRange, forgetRanges } from "./ranges";
import { StoredQuery, storedRows } from "./stored";

export function deferredSql(): Array<string> {
  return [
    "CREATE TABLE IF NOT EXISTS _weir_deferred_queries (group_id TEXT NOT NULL, hash TEXT NOT NULL, " +
      "keeps INTEGER NOT NULL DEFAULT 0, turn INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (group_id, hash)) WITHOUT ROWID",
  ];
}

/** An earlier engine's deferred queries all held no rows, and took their turns in hash order. */
export function upgradeDeferred(): void {
  const columns = queryRows(
    "SELECT group_concat(name) FROM pragma_table_info('_weir_deferred_queries')",
  )[0][0];
  if (!columns.includes("keeps"))
    exec("ALTER TABLE _weir_deferred_queries ADD COLUMN keeps INTEGER NOT NULL DEFAULT 0");
  if (!columns.includes("turn"))
    exec("ALTER TABLE _weir_deferred_queries ADD COLUMN turn INTEGER NOT NULL DEFAULT 0");
}

/** The condition that the group at `alias`.group_id has no deferred query. */
export function noneDeferred(alias: string): string {
  return (
    " AND NOT EXISTS (SELECT 1 FROM _weir_deferred_queries AS x WHERE x.group_id = " + alias + ".group_id)"
  );
}

/**
 * Leaves the group's query `hash` (a JSON parameter) to a later pull, its turn after every query
 * of the group waiting already; `keeps`: it holds the rows no write changed, or those of its
 * ranges so far (ranges.ts), else none. A query deferred again keeps its turn, and holds what
 * the last deferral says.
 */
export function defer(group: string, hash: string, keeps: bool = false): void {
  if (!keeps) forgetRange(group, hash);
  exec(
    "INSERT INTO _weir_deferred_queries (group_id, hash, keeps, turn) VALUES (?, ?, ?, (SELECT coalesce(max(turn), 0) " +
      "+ 1 FROM _weir_deferred_queries WHERE group_id = ?)) ON CONFLICT DO UPDATE SET keeps = excluded.keeps",
    params([group, hash, keeps ? "1" : "0", group]),
  );
}

/** How many of the group's queries wait. */
export function countDeferred(group: string): i32 {
  return I32.parseInt(
    queryRows("SELECT count(*) FROM _weir_deferred_queries WHERE group_id = ?", params([group]))[0][0],
    10,
  );
}

/** The query `hash` is evaluated, or deleted: it waits no more. */
export function undefer(group: string, hash: string): void {
  forgetRange(group, hash);
  exec("DELETE FROM _weir_deferred_queries WHERE group_id = ? AND hash = ?", params([group, hash]));
}

/** None of the group's queries waits (a reset or a clear starts over; claims re-evaluate all). */
export function undeferAll(group: string): void {
  forgetRanges(group);
  exec("DELETE FROM _weir_deferred_queries WHERE group_id = ?", params([group]));
}

/**
 * The group's deferred queries, the longest waiting first (hashes as JSON parameters, as
 * storedQueries gives them), each with whether it `keeps` rows and where its ranges stand.
 */
export function deferredQueries(group: string): Array<StoredQuery> {
  const rows = queryRows(
    "SELECT json_quote(q.hash), q.plan, q.tables, d.keeps, coalesce(r.after, ''), coalesce(r.held, 0), " +
      "coalesce(r.spent, 0) FROM " +
      "_weir_deferred_queries AS d JOIN _weir_queries AS q ON q.group_id = d.group_id AND q.hash = d.hash LEFT JOIN " +
      "_weir_query_ranges AS r ON r.group_id = d.group_id AND r.hash = d.hash WHERE d.group_id = ? ORDER BY d.turn, d.hash",
    params([group]),
  );
  return storedRows(rows);
}
