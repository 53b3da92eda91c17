// The rows a query-aware group is owed: the rows whose patch its client has not received yet,
// kept in the namespace's database so that an answer cut by the pull caps sends the rest later.
//
// A pull first computes the group's membership at the watermark (pull.ts), then adds to
// the owed rows those whose membership moved and the held rows that changed since its cookie (on
// a reset: every held row), and sends at most `maxChangeRows` rows / `maxChangeBytes` bytes of
// them (at least one), in key order, removing them. An owed row is put with its current value
// while the group holds it, deleted when the group no longer holds it and the client has it
// (`client_has`), and dropped unsent otherwise. Whether the client has a row is exact: a row that
// is not owed is held by the group exactly when the client has it, so a row's `client_has` is
// fixed when it becomes owed (whether the group held it before the pull) and kept while it stays
// owed. The patch is built at send time, so a row that changes or moves again while owed is sent
// once, as it is then. Owed rows never enter the engine: only the keys and sizes of the rows an
// answer sends do, to place the cut.
//
// While rows are owed the group also has a `_weir_query_partial` row: the cookie its
// `lastMutationIDChanges` were last complete at (answer-parts.ts).
import { ChangeScope } from "../change-keys";
import { exec, queryJoinedStatement, queryPayloadStatement, queryRows, Statement } from "../host";
import { delOp, keyMatch, putOp } from "../projection";
import { Schema } from "../schema";
import { firstSeq } from "../state";
import { ident, literal, params, parseI64 } from "../text";
import { AnswerPace, meteredCall } from "./limits";
import { forgetSent, keepSent, sentTable } from "./resume";

/** The JSON text of an empty string: a key before every owed row's. */
const EMPTY_TEXT = '""';

const HELD_NOW =
  "EXISTS (SELECT 1 FROM _weir_group_rows AS g WHERE g.group_key = ? AND g.tbl = s.tbl AND g.pk = s.pk)";

/** The owed rows' table (a function: a build without the query engine, ../features.ts, holds none of its text). */
export function pendingTable(): string {
  return (
    "CREATE TABLE IF NOT EXISTS _weir_query_pending (group_key INTEGER NOT NULL, tbl TEXT NOT NULL, pk TEXT NOT NULL, " +
    "client_has INTEGER NOT NULL, PRIMARY KEY (group_key, tbl, pk)) WITHOUT ROWID"
  );
}

export function pendingSql(): Array<string> {
  return [
    pendingTable(),
    sentTable(),
    "CREATE TABLE IF NOT EXISTS _weir_query_partial (group_id TEXT PRIMARY KEY, since INTEGER NOT NULL) WITHOUT ROWID",
  ];
}

/**
 * Owes the rows an incremental pull moved: those whose count changed and whose holding did
 * (scratch kind 1), and the held rows that changed in (cookie, watermark] (among the changes
 * `scope` reads: a held row is visible, so its changes are among them).
 */
export function oweChanges(groupKey: string, cookie: i64, watermark: i64, scope: ChangeScope): void {
  exec(
    "INSERT INTO _weir_query_pending (group_key, tbl, pk, client_has) SELECT ?, s.tbl, s.pk, s.was_held " +
      "FROM _weir_query_scratch AS s WHERE s.kind = 1 AND s.was_held <> " +
      HELD_NOW +
      " ON CONFLICT DO NOTHING",
    params([groupKey, groupKey]),
  );
  // Held now, and not owed for its holding: the client has it.
  const bound: string[] = [groupKey];
  const changes = scope.rows(firstSeq(cookie + 1).toString(), firstSeq(watermark + 1).toString(), bound);
  bound.push(groupKey);
  exec(
    "INSERT INTO _weir_query_pending (group_key, tbl, pk, client_has) SELECT ?, s.tbl, s.pk, 1 FROM " +
      changes +
      " AS s WHERE " +
      HELD_NOW +
      " ON CONFLICT DO NOTHING",
    params(bound),
  );
}

// The rows `oweChanges` would owe, as the owed table holds them (a row moved and changed is
// owed once; whether the client has it matters only to a row no longer held, which moved), the
// changes read being `changes` (ChangeScope.rows).
function owedChanges(changes: string): string {
  return (
    "SELECT ? AS group_key, tbl, pk, max(client_has) AS client_has FROM (SELECT s.tbl AS tbl, s.pk AS pk, " +
    "s.was_held AS client_has FROM _weir_query_scratch AS s WHERE s.kind = 1 AND s.was_held <> " +
    HELD_NOW +
    " UNION ALL SELECT s.tbl, s.pk, 1 FROM " +
    changes +
    " AS s WHERE " +
    HELD_NOW +
    ") GROUP BY tbl, pk"
  );
}

/**
 * Sends the rows an incremental pull moved (see `oweChanges`) to a group owed none before, when
 * they all fit under the caps: rendered in one statement, their payloads joined by SQLite, and
 * nothing owed. Answers how many were sent, or -1 when they do not fit (then the caller owes
 * them by `oweChanges` and sends them by `sendOwed`).
 */
export function sendChanges(
  schema: Schema,
  format: i32,
  groupKey: string,
  cookie: i64,
  watermark: i64,
  maxRows: i64,
  maxBytes: i64,
  scope: ChangeScope,
): i64 {
  if (schema.tables.length == 0) return 0;
  const limit = maxRows < I64.MAX_VALUE ? maxRows + 1 : maxRows;
  const bound = [maxRows.toString(), maxBytes.toString(), groupKey, groupKey];
  const changes = scope.rows(firstSeq(cookie + 1).toString(), firstSeq(watermark + 1).toString(), bound);
  bound.push(groupKey);
  const key = "sendChanges " + format.toString() + " " + limit.toString() + " " + scope.signature();
  let sql = schema.statement(key);
  if (sql == null) {
    sql = schema.keep(
      key,
      "SELECT CASE WHEN count(*) <= ? AND total(octet_length(patch)) <= ? THEN count(*) ELSE -1 END, " +
        "group_concat(patch, ','), total(patch LIKE '{\"op\":\"del\"%') FROM (SELECT patch FROM (SELECT " +
        patchSql(schema, format) +
        " AS patch FROM (" +
        owedChanges(changes) +
        ") AS _weir_o ORDER BY _weir_o.tbl, _weir_o.pk LIMIT -1) WHERE patch IS NOT NULL LIMIT " +
        limit.toString() +
        ")",
    );
  }
  return <i64>queryJoinedStatement(sql, params(bound));
}

/** Owes every held row to a client that starts from nothing (the answer begins with `clear`). */
export function oweAll(groupKey: string): void {
  exec("DELETE FROM _weir_query_pending WHERE group_key = ?", params([groupKey]));
  exec(
    "INSERT INTO _weir_query_pending (group_key, tbl, pk, client_has) SELECT group_key, tbl, pk, 0 " +
      "FROM _weir_group_rows WHERE group_key = ?",
    params([groupKey]),
  );
}

/** The patch of an owed row of each table (NULL: nothing to send), by the row's `tbl`. */
function patchSql(schema: Schema, format: i32): string {
  const cases: string[] = [];
  for (let i = 0; i < schema.tables.length; i++) {
    const table = schema.tables[i];
    cases.push(
      " WHEN " +
        literal(table.name) +
        " THEN coalesce(CASE WHEN EXISTS (SELECT 1 FROM _weir_group_rows AS g WHERE g.group_key = _weir_o.group_key " +
        "AND g.tbl = _weir_o.tbl AND g.pk = _weir_o.pk) THEN (SELECT " +
        putOp(table, format) +
        " FROM " +
        ident(table.name) +
        " WHERE " +
        keyMatch(table, "_weir_o.pk") +
        ") END, CASE WHEN _weir_o.client_has THEN " +
        delOp(table, format, "_weir_o.pk") +
        " END)",
    );
  }
  // The owed row is aliased under the reserved prefix: no app table can take its name.
  return "CASE _weir_o.tbl" + cases.join("") + " END";
}

/**
 * Sends every row the group holds to a client that starts from nothing (the answer begins with
 * `clear`), when they all fit under the caps: one statement renders them and SQLite joins their
 * payloads, and nothing is owed. Answers how many were sent, or -1 when they do not fit (then
 * the caller owes them all and sends them by `sendOwed`). Held rows were all evaluated in this
 * pull, so each is put.
 */
export function sendHeld(schema: Schema, format: i32, groupKey: string, maxRows: i64, maxBytes: i64): i64 {
  if (schema.tables.length == 0) return 0;
  const bound: string[] = [maxRows.toString(), maxBytes.toString()];
  for (let i = 0; i < schema.tables.length; i++) bound.push(groupKey);
  const limit = maxRows < I64.MAX_VALUE ? maxRows + 1 : maxRows;
  const key = "sendHeld " + format.toString() + " " + limit.toString();
  let sql = schema.statement(key);
  if (sql == null) sql = schema.keep(key, heldSql(schema, format, limit));
  // count(*) is -1 (nothing kept) when they do not fit.
  return <i64>queryJoinedStatement(sql, params(bound));
}

/**
 * Whether the group holds more than `maxRows` rows (of `table`, by default the group's rows: then
 * they cannot all fit under the caps, and `sendHeld` would render `maxRows` of them for
 * nothing). Counts along the group's key, at most `maxRows + 1` entries.
 */
export function holdsMoreThan(groupKey: string, maxRows: i64, table: string = "_weir_group_rows"): bool {
  if (maxRows >= I64.MAX_VALUE) return false;
  const over = (maxRows + 1).toString();
  return (
    queryRows(
      "SELECT count(*) FROM (SELECT 1 FROM " + table + " WHERE group_key = ? LIMIT " + over + ")",
      params([groupKey]),
    )[0][0] == over
  );
}

function heldSql(schema: Schema, format: i32, limit: i64): string {
  const parts: string[] = [];
  for (let i = 0; i < schema.tables.length; i++) {
    const table = schema.tables[i];
    // Joined rather than looked up by a subquery per row: SQLite renders them about a third
    // faster so. Every held row exists (each was evaluated in this pull).
    parts.push(
      "SELECT " +
        putOp(table, format, "_weir_r") +
        " AS patch FROM _weir_group_rows AS _weir_g JOIN " +
        ident(table.name) +
        " AS _weir_r ON " +
        keyMatch(table, "_weir_g.pk", "_weir_r") +
        " WHERE _weir_g.group_key = ? AND _weir_g.tbl = " +
        literal(table.name),
    );
  }
  // The LIMIT keeps the rows in a subquery of their own, so that each patch is rendered once for
  // both the sum of sizes and the joined text.
  return (
    "SELECT CASE WHEN count(*) <= ? AND total(octet_length(patch)) <= ? THEN count(*) ELSE -1 END, " +
    "group_concat(patch, ',') FROM (SELECT patch FROM (" +
    parts.join(" UNION ALL ") +
    ") WHERE patch IS NOT NULL LIMIT " +
    limit.toString() +
    ")"
  );
}

export class Sent {
  /** The payloads the answer includes (the first ones the host holds). */
  included: i64 = 0;
  /** Rows are still owed: the answer was cut. */
  more: bool = false;
}

/**
 * Rows a metered call's answer renders at a time: between two pages it stops once the call has
 * run its answer's time (limits.ts, AnswerPace), so that rendering a large answer holds the
 * thread about that long, not as long as `maxChangeRows` rows take.
 */
const ANSWER_PAGE_ROWS: i64 = 256;

/**
 * Rows a metered call renders in one statement, without owing them first (sendHeld,
 * sendChanges): more go through the owed rows and are rendered a page at a time.
 */
const ANSWER_AT_ONCE: i64 = 1024;

/** The cap on the rows rendered in one statement: `maxRows`, or less where the call is metered. */
export function rowsAtOnce(maxRows: i64): i64 {
  return meteredCall() ? min<i64>(maxRows, ANSWER_AT_ONCE) : maxRows;
}

/**
 * Owed rows of the group as an answer sends them, in key order, rendered (NULL rows dropped),
 * after the row (tbl, pk) bound second and third (JSON texts; "" before the first), at most
 * `limit` of them (written as an integer, not bound: SQLite plans a bound LIMIT less well; here,
 * ten times slower for a few rows). The inner LIMIT keeps SQLite from flattening the subquery
 * into the outer one, which would render each patch three times (for the NULL test, the length
 * and the payload). The scan follows the table's key, so it stops after the rows it answers.
 */
function owedPage(schema: Schema, format: i32, limit: i64): Statement {
  const key = "owedPage " + format.toString() + " " + limit.toString();
  const kept = schema.statement(key);
  if (kept != null) return kept;
  return schema.keep(
    key,
    "SELECT json_quote(tbl), json_quote(pk), octet_length(patch), patch FROM (SELECT _weir_o.tbl AS tbl, " +
      "_weir_o.pk AS pk, " +
      patchSql(schema, format) +
      " AS patch FROM _weir_query_pending AS _weir_o WHERE _weir_o.group_key = ? AND (_weir_o.tbl, _weir_o.pk) > (?, ?) " +
      "ORDER BY _weir_o.tbl, _weir_o.pk LIMIT -1) WHERE patch IS NOT NULL LIMIT " +
      limit.toString(),
  );
}

/**
 * Sends owed rows of the group up to the caps, in key order, and stops owing them. Leaves their
 * payloads with the host (queryPayload). `keep`: the rows sent are kept for a pull that lost the
 * answer (resume.ts). Where the call is metered the rows are rendered a page at a time, and the
 * answer is cut too once the call has run its answer's time (after its first page).
 */
export function sendOwed(
  schema: Schema,
  format: i32,
  groupKey: string,
  maxRows: i64,
  maxBytes: i64,
  keep: bool = false,
): Sent {
  const sent = new Sent();
  if (schema.tables.length == 0) {
    exec("DELETE FROM _weir_query_pending WHERE group_key = ?", params([groupKey]));
    return sent;
  }
  // Unmetered, one statement renders the rows the caps allow and one more, which says whether
  // more rows are owed.
  const whole = maxRows < I64.MAX_VALUE ? maxRows + 1 : maxRows;
  const page = meteredCall() ? min<i64>(ANSWER_PAGE_ROWS, whole) : whole;
  let bytes: i64 = 0;
  let last = "";
  let after = [EMPTY_TEXT, EMPTY_TEXT];
  // The answer takes no more rows: the next page only tells whether more are owed.
  let closed = false;
  const pace = new AnswerPace();
  if (keep) forgetSent(groupKey);
  // Where the call is metered, a page's rows stop being owed (and are kept) as it ends, so that
  // the answer's pace counts that with the page: left to the end, it took a third as long as the
  // rendering again, past the answer's time.
  const settling = meteredCall();
  for (;;) {
    const limit = closed ? 1 : page;
    if (!closed) pace.start();
    const text = queryPayloadStatement(
      owedPage(schema, format, limit),
      params([groupKey, after[0], after[1]]),
    );
    const lines = text.length == 0 ? new Array<string>(0) : text.split("\n");
    for (let i = 0; i < lines.length; i++) {
      const size = parseI64(lines[i].split("\t")[2]);
      if (sent.included > 0 && (closed || sent.included >= maxRows || bytes + size > maxBytes)) {
        sent.more = true;
        break;
      }
      bytes += size;
      last = lines[i];
      sent.included++;
    }
    if (sent.more || lines.length < limit) break;
    after = last.split("\t");
    if (settling && !closed) settleSent(groupKey, keep, after);
    closed = sent.included >= maxRows || !pace.another();
  }
  if (!sent.more) {
    if (keep) keepSent(groupKey, "", []);
    exec("DELETE FROM _weir_query_pending WHERE group_key = ?", params([groupKey]));
    return sent;
  }
  settleSent(groupKey, keep, last.split("\t"));
  return sent;
}

/** The group's owed rows up to the row `upTo` ([tbl, pk], JSON texts) were sent: they are owed no longer, and kept when `keep`. */
function settleSent(groupKey: string, keep: bool, upTo: Array<string>): void {
  // A row value, which SQLite reads as a range of the table's key (for an OR of the columns it
  // would read the group's owed rows from the first).
  const cut = " AND (tbl, pk) <= (?, ?)";
  if (keep) keepSent(groupKey, cut, [upTo[0], upTo[1]]);
  exec("DELETE FROM _weir_query_pending WHERE group_key = ?" + cut, params([groupKey, upTo[0], upTo[1]]));
}
