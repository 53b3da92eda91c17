// Pull: the rows a client group must change to catch up from its cookie.
import {
  FALSE,
  FORMAT_REPLICACHE,
  NEEDS_TRANSACTION,
  NULL_COOKIE,
  PULL_COOKIE,
  PULL_FLOOR,
  PULL_FOLLOWED,
  PULL_IDS_LENGTH,
  PULL_INCLUDED,
  PULL_MORE,
  PULL_MUTATION_IDS,
  PULL_QUERIES_COPIED,
  PULL_QUERIES_RECOMPUTED,
  PULL_QUERY_ROWS_EXAMINED,
  PULL_RESET,
  PULL_UNCHANGED,
  PULL_WATERMARK,
  QUERY_OP_VERSION,
  ROWS_AFTER_OP_HERE,
  ROWS_HERE,
  TRUE,
} from "../src/abi";
import { fail } from "./errors";
import {
  COLUMN_SEPARATOR,
  exec,
  queryJoinedPayloads,
  queryPayload,
  queryRows,
  queryStatement,
  ROW_SEPARATOR,
  Statement,
} from "./host";
import { delOp, keyMatch, putOp } from "./projection";
import { queryPull } from "./query/pull";
import { PRIOR_SEQ, priorTableName, Schema, Table } from "./schema";
import { firstSeq, WATERMARK } from "./state";
import { ident, jsonString, params, parseI64 } from "./text";
import { Filter, parseVisibility, Visibility } from "./visibility";

// The group's visibility is compared last: its column stays NULL for a group not yet pulled.
const PULL_STATE = new Statement(
  "SELECT " +
    WATERMARK +
    ", s.floor, g.user_id = ?, o.since IS NOT NULL, q.cookie, q.resume_cookie, g.visibility IS ? FROM _weir_state AS s " +
    "LEFT JOIN _weir_client_groups " +
    "AS g ON g.id = ? LEFT JOIN _weir_query_groups AS q ON q.group_id = g.id LEFT JOIN _weir_query_partial AS o " +
    "ON o.group_id = g.id WHERE s.id = 1",
);

class PullPlan {
  cookie: i64 = 0;
  reset: bool = false;
  included: i64 = 0;
  lastMutationIDs: i32 = 0;
  patch: string = "";
  evaluated: i64 = 0;
  recomputed: i64 = 0;
  copied: i64 = 0;
  /** A query-aware answer left rows owed. */
  more: bool = false;
  /** The followers that took the answer (query/follow.ts), and the length of its ids' JSON. */
  followed: string = "";
  idsLength: i32 = 0;
}

/** Checks that the group belongs to the user (registering it on first use). "" or a failure. */
export function claimGroup(groupID: string, userID: string): string {
  const rows = queryRows(
    "SELECT user_id = ? FROM _weir_client_groups WHERE id = ?",
    params([jsonString(userID), jsonString(groupID)]),
  );
  if (rows.length == 0) {
    exec(
      "INSERT INTO _weir_client_groups (id, user_id) VALUES (?, ?)",
      params([jsonString(groupID), jsonString(userID)]),
    );
    return "";
  }
  if (rows[0][0] != "1") return fail("forbidden", "the client group belongs to another user");
  return "";
}

function fullResetSql(schema: Schema, visibility: Visibility, format: i32, bound: Array<string>): string {
  const parts: string[] = [];
  for (let i = 0; i < schema.tables.length; i++) {
    const table = schema.tables[i];
    const filter = visibility.filterFor(table.name);
    parts.push(
      "SELECT " +
        putOp(table, format) +
        " AS patch FROM " +
        quoteTable(table) +
        " WHERE " +
        filter.condition(),
    );
    filter.addParams(bound);
  }
  return parts.join(" UNION ALL ");
}

function quoteTable(table: Table): string {
  return ident(table.name);
}

// For each row changed after the cookie: its first version after the cookie (which orders the
// answer and decides where caps cut it), and the operation that brings the client up to date.
// The live row, if visible, is put. Otherwise the row is deleted if the client may hold it: not
// only as it was at the cookie, since an earlier answer cut by a cap may have sent a later
// state, so if any state the row had since the cookie was visible. Those states are the prior
// values of the row's first change in each version since the cookie (intermediate states inside
// a transaction were never committed, so no client saw them), so keys of rows the client could
// never see are not sent either.
function changesSql(
  schema: Schema,
  visibility: Visibility,
  format: i32,
  cookie: i64,
  watermark: i64,
  bound: Array<string>,
): string {
  const parts: string[] = [];
  for (let i = 0; i < schema.tables.length; i++) {
    const table = schema.tables[i];
    const filter: Filter = visibility.filterFor(table.name);
    const live =
      "(SELECT " +
      putOp(table, format) +
      " FROM " +
      quoteTable(table) +
      " WHERE " +
      keyMatch(table, "_weir_pk") +
      " AND " +
      filter.condition() +
      ")";
    filter.addParams(bound);
    const range = "seq >= ? AND seq < ? AND tbl = ?";
    const rangeParams = [
      firstSeq(cookie + 1).toString(),
      firstSeq(watermark + 1).toString(),
      jsonString(table.name),
    ];
    let seen: string;
    if (filter.isAll()) {
      // Every state was visible: the client may hold the row if it existed at any of them.
      seen =
        "SELECT pk AS _weir_pk, min(version) AS _weir_first, max(existed) AS _weir_seen " +
        "FROM _weir_changes WHERE " +
        range +
        " GROUP BY pk";
      for (let p = 0; p < rangeParams.length; p++) bound.push(rangeParams[p]);
    } else {
      // The prior table is aliased as the app's table, so the filter reads its columns by name
      // and with their types; the subquery's other columns are named _weir_*, which no app
      // column can be.
      const firsts =
        "SELECT pk, version, min(seq) AS s FROM _weir_changes WHERE " + range + " GROUP BY pk, version";
      const states =
        "SELECT c.pk AS _weir_pk, c.version AS _weir_version, " +
        quoteTable(table) +
        "." +
        PRIOR_SEQ +
        " IS NOT NULL AS _weir_existed, " +
        priorColumns(table) +
        " FROM (" +
        firsts +
        ") AS c LEFT JOIN " +
        priorTableName(table) +
        " AS " +
        quoteTable(table) +
        " ON " +
        quoteTable(table) +
        "." +
        PRIOR_SEQ +
        " = c.s";
      seen =
        "SELECT _weir_pk, min(_weir_version) AS _weir_first, max(_weir_existed AND " +
        filter.condition() +
        ") AS _weir_seen FROM (" +
        states +
        ") AS " +
        quoteTable(table) +
        " GROUP BY _weir_pk";
      // Parameters bind in the order their `?` appear: the filter, then the range.
      filter.addParams(bound);
      for (let p = 0; p < rangeParams.length; p++) bound.push(rangeParams[p]);
    }
    parts.push(
      "SELECT _weir_first, coalesce(" +
        live +
        ", CASE WHEN _weir_seen THEN " +
        delOp(table, format, "_weir_pk") +
        " END) AS patch FROM (" +
        seen +
        ")",
    );
  }
  return (
    "SELECT _weir_first, octet_length(patch), patch FROM (" +
    parts.join(" UNION ALL ") +
    ") WHERE patch IS NOT NULL ORDER BY _weir_first"
  );
}

/** The prior table's columns, qualified by the app table's name it is aliased as. */
function priorColumns(table: Table): string {
  const parts: string[] = [];
  for (let i = 0; i < table.columns.length; i++) {
    const name = ident(table.columns[i].name);
    parts.push(quoteTable(table) + "." + name + " AS " + name);
  }
  return parts.join(", ");
}

/** `"clientID":lastMutationID` members for the group's clients whose ids moved in (after, upTo]. */
function lastMutationIDs(groupID: string, after: i64, upTo: i64, plan: PullPlan): string {
  const rows = queryRows(
    "SELECT json_quote(id), last_mutation_id FROM _weir_clients WHERE group_id = ? AND version > ? AND version <= ?",
    params([jsonString(groupID), after.toString(), upTo.toString()]),
  );
  const members: string[] = [];
  for (let i = 0; i < rows.length; i++) members.push(rows[i][0] + ":" + rows[i][1]);
  plan.lastMutationIDs = members.length;
  return "{" + members.join(",") + "}";
}

function planReset(
  schema: Schema,
  visibility: Visibility,
  format: i32,
  watermark: i64,
  plan: PullPlan,
): void {
  const bound: string[] = [];
  const sql = fullResetSql(schema, visibility, format, bound);
  plan.reset = true;
  plan.cookie = watermark;
  plan.included =
    schema.tables.length == 0
      ? 0
      : // count(*), not count(patch): SQLite flattens the subquery into both aggregates, and
        // each would render every row's JSON (a patch is never NULL).
        queryJoinedPayloads("SELECT count(*), group_concat(patch, ',') FROM (" + sql + ")", params(bound));
  plan.patch = '{"op":"clear"}' + ROWS_AFTER_OP_HERE;
}

// A pull far behind reads only the versions that can fill its row cap, not every change since
// its cookie: they end with the version of the (maxRows + 1)-th change logged after the cookie
// (a version is read whole). Distinct rows are at most the logged changes, so the cap can still
// cut inside them; when it does not, the answer ends at that version, as if a cap had cut it
// there, and the client pulls again. A row's states after that version are judged by the pull
// that reads them: each such state is the prior value of a later change (or the live row).
const WINDOW_END = new Statement(
  "SELECT version FROM _weir_changes WHERE seq >= ? AND seq < ? AND tbl <> '' ORDER BY seq LIMIT 1 OFFSET ?",
);

/** Caps beyond this read every change since the cookie (an OFFSET that large finds nothing). */
const WINDOWED_ROWS: i64 = 1_000_000_000;

function windowEnd(cookie: i64, watermark: i64, maxRows: i64): i64 {
  if (maxRows >= WINDOWED_ROWS) return watermark;
  const found = queryStatement(
    WINDOW_END,
    params([firstSeq(cookie + 1).toString(), firstSeq(watermark + 1).toString(), maxRows.toString()]),
  );
  return found.length == 0 ? watermark : parseI64(found);
}

// Caps cut the answer only between versions: the changes of one version (one transaction)
// arrive together, and the first version is always included so that a pull always progresses.
// A version is included only if all of it fits, so each is measured whole before it is taken.
function planChanges(
  schema: Schema,
  visibility: Visibility,
  format: i32,
  cookie: i64,
  watermark: i64,
  maxRows: i64,
  maxBytes: i64,
  plan: PullPlan,
): void {
  const bound: string[] = [];
  const end = windowEnd(cookie, watermark, maxRows);
  const sql = changesSql(schema, visibility, format, cookie, end, bound);
  const text = schema.tables.length == 0 ? "" : queryPayload(sql, params(bound));
  plan.cookie = end;
  let rows: i64 = 0;
  let bytes: i64 = 0;
  let position = 0;
  while (position < text.length) {
    // The next version: its rows are consecutive (the answer is ordered by version).
    const version = parseI64(text.substring(position, text.indexOf(COLUMN_SEPARATOR, position)));
    let versionRows: i64 = 0;
    let versionBytes: i64 = 0;
    let next = position;
    while (next < text.length) {
      let lineEnd = text.indexOf(ROW_SEPARATOR, next);
      if (lineEnd < 0) lineEnd = text.length;
      const tab = text.indexOf(COLUMN_SEPARATOR, next);
      if (parseI64(text.substring(next, tab)) != version) break;
      versionRows++;
      versionBytes += parseI64(text.substring(tab + 1, lineEnd));
      next = lineEnd + 1;
    }
    if (rows > 0 && (rows + versionRows > maxRows || bytes + versionBytes > maxBytes)) {
      plan.cookie = version - 1;
      break;
    }
    rows += versionRows;
    bytes += versionBytes;
    position = next;
  }
  plan.included = rows;
  plan.patch = ROWS_HERE;
}

/**
 * Answers a pull. Returns "<meta>\n<body>", the meta's fields at the PULL_* positions of
 * src/abi.ts, or a failure. The body holds a splice mark where the host puts the first
 * `included` row payloads.
 */
export function pull(
  schema: Schema,
  groupID: string,
  userID: string,
  cookie: i64,
  format: i32,
  maxRows: i64,
  maxBytes: i64,
  visibilityText: string,
  caughtUpOnly: bool,
  queriesSupplied: bool,
  queryPatch: string,
  maxQueryRows: i64,
  followersParam: string = "",
  visibilityParam: string = "null",
  claimsParam: string = "null",
): string {
  // One row: watermark, floor, whether the group is the user's (1), another's (0) or new (""),
  // whether query rows are owed to it (1), the cookie its query membership is at (none: it
  // never pulled with queries), the cookie a lost part of its last answer resumes from (none),
  // and whether its rows were answered under this pull's visibility.
  const state = queryStatement(PULL_STATE, params([jsonString(userID), claimsParam, jsonString(groupID)]));
  if (state.length == 0) return fail("internal", "the engine is not installed in this database");
  const firstTab = state.indexOf(COLUMN_SEPARATOR);
  const secondTab = state.indexOf(COLUMN_SEPARATOR, firstTab + 1);
  const watermark = parseI64(state.substring(0, firstTab));
  const floor = parseI64(state.substring(firstTab + 1, secondTab));
  const thirdTab = state.indexOf(COLUMN_SEPARATOR, secondTab + 1);
  const owner = state.substring(secondTab + 1, thirdTab);
  const fourthTab = state.indexOf(COLUMN_SEPARATOR, thirdTab + 1);
  // Rows are owed to the group: an earlier answer was cut by a cap.
  const owed = state.substring(thirdTab + 1, fourthTab) == "1";
  const fifthTab = state.indexOf(COLUMN_SEPARATOR, fourthTab + 1);
  // The cookie the group's query membership is at; -2 when it never pulled with queries.
  const membership = state.substring(fourthTab + 1, fifthTab);
  const storedCookie: i64 = membership.length == 0 ? -2 : parseI64(membership);
  const sixthTab = state.indexOf(COLUMN_SEPARATOR, fifthTab + 1);
  // The cookie a pull that lost the group's last answer resumes from (query/resume.ts); -2: none.
  const resumable = state.substring(fifthTab + 1, sixthTab);
  const resumeCookie: i64 = resumable.length == 0 ? -2 : parseI64(resumable);
  if (owner == "0") return fail("forbidden", "the client group belongs to another user");
  // The caller's claims filter rows otherwise than those the group holds were filtered by (a
  // role changed, or an operator switched visibility): the group's rows are recomputed, as a
  // reset (plain pulls) or a diff of every query against what the group holds.
  const claimsMoved = owner == "1" && state.substring(sixthTab + 1) != "1";
  if (cookie > watermark) {
    return fail(
      "cookie_from_future",
      "the cookie is ahead of this server: drop the local copy and pull again",
    );
  }
  // A group that pulls with queries (now or before) answers by its queries' membership, unless
  // it is caught up and changes none of them.
  const byQueries = queriesSupplied || storedCookie != -2;
  // A patch of the transform version alone changes no query.
  const versionOnly =
    queryPatch.startsWith(QUERY_OP_VERSION + COLUMN_SEPARATOR) && !queryPatch.includes(ROW_SEPARATOR);
  const patchesQueries = queryPatch.length > 0 && !versionOnly;
  const unchanged =
    cookie == watermark &&
    !claimsMoved &&
    (!byQueries || (!patchesQueries && storedCookie == cookie && !owed));
  // A caller that asks only for the caught-up answer runs without a transaction: it gets that
  // answer from these reads, or NEEDS_TRANSACTION when the pull has more to do.
  if (caughtUpOnly && (owner.length == 0 || !unchanged)) return NEEDS_TRANSACTION;
  if (owner.length == 0) claimGroup(groupID, userID);
  if (claimsMoved || owner.length == 0) {
    exec(
      "UPDATE _weir_client_groups SET visibility = ? WHERE id = ?",
      params([claimsParam, jsonString(groupID)]),
    );
  }

  const plan = new PullPlan();
  let body: string;
  if (!unchanged && byQueries) {
    const answer = queryPull(
      schema,
      groupID,
      cookie,
      watermark,
      floor,
      storedCookie,
      owed,
      resumeCookie,
      format,
      parseVisibility(visibilityText),
      queryPatch,
      maxQueryRows,
      maxRows,
      maxBytes,
      userID,
      followersParam,
      visibilityParam,
      claimsMoved,
      claimsParam,
    );
    if (answer.refused.length > 0) return fail("query_budget_exceeded", answer.refused);
    if (answer.exceeded) {
      return fail(
        "query_budget_exceeded",
        "the group's queries produced more than " +
          maxQueryRows.toString() +
          " rows in one pull: narrow them (a limit, a condition) or raise the server's maxQueryRows",
      );
    }
    plan.cookie = answer.cookie;
    plan.reset = answer.reset;
    plan.included = answer.included;
    plan.evaluated = answer.evaluated;
    plan.recomputed = answer.recomputed;
    plan.copied = answer.copied;
    plan.more = answer.more;
    // The ids moved since they were last complete, once every row the answer's parts cover is
    // sent: a client never sees its mutation confirmed before the rows it wrote.
    const ids = answer.more ? "{}" : lastMutationIDs(groupID, answer.idsSince, watermark, plan);
    plan.followed = answer.followed;
    plan.idsLength = ids.length;
    body =
      '{"cookie":' +
      answer.cookie.toString() +
      ',"lastMutationIDChanges":' +
      ids +
      (format == FORMAT_REPLICACHE ? ',"patch":[' : ',"gotQueries":' + answer.gotQueries + ',"rowsPatch":[') +
      (answer.reset ? '{"op":"clear"}' + ROWS_AFTER_OP_HERE : ROWS_HERE) +
      "]}";
  } else if (cookie == watermark && !claimsMoved) {
    plan.cookie = watermark;
    body =
      format == FORMAT_REPLICACHE
        ? '{"cookie":' + watermark.toString() + ',"lastMutationIDChanges":{},"patch":[]}'
        : '{"cookie":' + watermark.toString() + ',"unchanged":true}';
  } else {
    const visibility = parseVisibility(visibilityText);
    const reset = cookie == NULL_COOKIE || cookie < floor || claimsMoved;
    if (reset) planReset(schema, visibility, format, watermark, plan);
    else planChanges(schema, visibility, format, cookie, watermark, maxRows, maxBytes, plan);
    const ids = lastMutationIDs(groupID, reset ? NULL_COOKIE : cookie, plan.cookie, plan);
    body =
      '{"cookie":' +
      plan.cookie.toString() +
      ',"lastMutationIDChanges":' +
      ids +
      (format == FORMAT_REPLICACHE ? ',"patch":[' : ',"rowsPatch":[') +
      plan.patch +
      "]}";
  }
  // The meta fields at their positions (src/abi.ts).
  const meta = new Array<string>(PULL_QUERIES_COPIED + 1);
  meta[PULL_COOKIE] = plan.cookie.toString();
  meta[PULL_RESET] = plan.reset ? TRUE : FALSE;
  meta[PULL_INCLUDED] = plan.included.toString();
  meta[PULL_MUTATION_IDS] = plan.lastMutationIDs.toString();
  // A query-aware answer that committed a new version for its cookie: the watermark is that now.
  meta[PULL_WATERMARK] = max<i64>(plan.cookie, watermark).toString();
  meta[PULL_FLOOR] = floor.toString();
  meta[PULL_UNCHANGED] = unchanged ? TRUE : FALSE;
  meta[PULL_QUERY_ROWS_EXAMINED] = plan.evaluated.toString();
  meta[PULL_QUERIES_RECOMPUTED] = plan.recomputed.toString();
  meta[PULL_MORE] = plan.more || plan.cookie < watermark ? TRUE : FALSE;
  meta[PULL_IDS_LENGTH] = plan.idsLength.toString();
  meta[PULL_FOLLOWED] = plan.followed;
  meta[PULL_QUERIES_COPIED] = plan.copied.toString();
  return meta.join(COLUMN_SEPARATOR) + ROW_SEPARATOR + body;
}
