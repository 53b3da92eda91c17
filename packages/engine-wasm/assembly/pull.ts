// Pull: the rows a client group must change to catch up from its cookie.
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
import { DIALECT_REPLICACHE, delOp, keyMatch, preImageColumns, putOp } from "./projection";
import { Schema, Table } from "./schema";
import { firstSeq, WATERMARK } from "./state";
import { ident, jsonString, params, parseI64, stringsParams } from "./text";
import { Filter, parseVisibility, Visibility } from "./visibility";

export const NULL_COOKIE: i64 = -1;
export const NEEDS_TRANSACTION = "?";

// Where the host splices the row payloads the engine included into the body: the first
// `included` payloads, joined by commas, preceded by a comma when an operation comes before.
// Neither character can occur raw in JSON text.
const ROWS_HERE = "\x01";
const PULL_STATE = new Statement(
  "SELECT " +
    WATERMARK +
    ", floor, (SELECT user_id = ? FROM _weir_client_groups WHERE id = ?) " +
    "FROM _weir_state WHERE id = 1",
);
const ROWS_AFTER_OP_HERE = "\x02";

class PullPlan {
  cookie: i64 = 0;
  reset: bool = false;
  included: i64 = 0;
  lastMutationIDs: i32 = 0;
  patch: string = "";
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
  if (rows[0][0] != "1") return fail(403, "forbidden", "the client group belongs to another user");
  return "";
}

function fullResetSql(schema: Schema, visibility: Visibility, dialect: i32, bound: Array<string>): string {
  const parts: string[] = [];
  for (let i = 0; i < schema.tables.length; i++) {
    const table = schema.tables[i];
    const filter = visibility.filterFor(table.name);
    parts.push(
      "SELECT " +
        putOp(table, dialect) +
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
// The live row, if visible, is put. Otherwise the row is deleted, but only if the client could
// see it at its cookie: that is judged on the row as it was before its first change since
// then, so that keys of rows the client never saw are not sent either.
function changesSql(
  schema: Schema,
  visibility: Visibility,
  dialect: i32,
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
      putOp(table, dialect) +
      " FROM " +
      quoteTable(table) +
      " WHERE " +
      keyMatch(table, "_weir_pk") +
      " AND " +
      filter.condition() +
      ")";
    filter.addParams(bound);
    const gone =
      "CASE WHEN _weir_had AND " + filter.condition() + " THEN " + delOp(table, dialect, "_weir_pk") + " END";
    filter.addParams(bound);
    const changed =
      "SELECT pk, min(seq) AS s, min(version) AS first FROM _weir_changes " +
      "WHERE seq >= ? AND seq < ? AND tbl = ? GROUP BY pk";
    bound.push(firstSeq(cookie + 1).toString());
    bound.push(firstSeq(watermark + 1).toString());
    bound.push(jsonString(table.name));
    const before =
      "(SELECT c.pk AS _weir_pk, c.first AS _weir_first, o.old IS NOT NULL AS _weir_had, " +
      preImageColumns(table, "o.old") +
      " FROM (" +
      changed +
      ") AS c JOIN _weir_changes AS o ON o.seq = c.s)";
    parts.push(
      "SELECT _weir_first, coalesce(" +
        live +
        ", " +
        gone +
        ") AS patch FROM " +
        before +
        " AS " +
        quoteTable(table),
    );
  }
  return (
    "SELECT _weir_first, length(CAST(patch AS BLOB)), patch FROM (" +
    parts.join(" UNION ALL ") +
    ") WHERE patch IS NOT NULL ORDER BY _weir_first"
  );
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
  dialect: i32,
  watermark: i64,
  plan: PullPlan,
): void {
  const bound: string[] = [];
  const sql = fullResetSql(schema, visibility, dialect, bound);
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

// Caps cut the answer only between versions: the changes of one version (one transaction)
// arrive together, and the first version is always included so that a pull always progresses.
function planChanges(
  schema: Schema,
  visibility: Visibility,
  dialect: i32,
  cookie: i64,
  watermark: i64,
  maxRows: i64,
  maxBytes: i64,
  plan: PullPlan,
): void {
  const bound: string[] = [];
  const sql = changesSql(schema, visibility, dialect, cookie, watermark, bound);
  const text = schema.tables.length == 0 ? "" : queryPayload(sql, params(bound));
  plan.cookie = watermark;
  let rows: i64 = 0;
  let bytes: i64 = 0;
  let groupVersion: i64 = -1;
  let position = 0;
  while (position < text.length) {
    let lineEnd = text.indexOf(ROW_SEPARATOR, position);
    if (lineEnd < 0) lineEnd = text.length;
    const tab = text.indexOf(COLUMN_SEPARATOR, position);
    const version = parseI64(text.substring(position, tab));
    const size = parseI64(text.substring(tab + 1, lineEnd));
    if (version != groupVersion) {
      if (rows > 0 && (rows + 1 > maxRows || bytes + size > maxBytes)) {
        plan.cookie = version - 1;
        break;
      }
      groupVersion = version;
    }
    rows++;
    bytes += size;
    position = lineEnd + 1;
  }
  plan.included = rows;
  plan.patch = ROWS_HERE;
}

/**
 * Answers a pull. Returns "<meta>\n<body>", where meta is
 * "cookie\treset\tincluded\tlastMutationIDs\twatermark\tfloor\tunchanged", or a failure. The body
 * holds a splice mark where the host puts the first `included` row payloads.
 */
export function pull(
  schema: Schema,
  groupID: string,
  userID: string,
  cookie: i64,
  dialect: i32,
  maxRows: i64,
  maxBytes: i64,
  visibilityText: string,
  caughtUpOnly: bool,
): string {
  // One row: watermark, floor, and whether the group is the user's (1), another's (0) or new ("").
  const state = queryStatement(PULL_STATE, stringsParams(userID, groupID));
  if (state.length == 0) return fail(500, "internal", "the engine is not installed in this database");
  const firstTab = state.indexOf(COLUMN_SEPARATOR);
  const secondTab = state.indexOf(COLUMN_SEPARATOR, firstTab + 1);
  const watermark = parseI64(state.substring(0, firstTab));
  const floor = parseI64(state.substring(firstTab + 1, secondTab));
  const owner = state.substring(secondTab + 1);
  if (owner == "0") return fail(403, "forbidden", "the client group belongs to another user");
  if (cookie > watermark) {
    return fail(
      409,
      "cookie_from_future",
      "the cookie is ahead of this server: drop the local copy and pull again",
    );
  }
  // A caller that asks only for the caught-up answer runs without a transaction: it gets that
  // answer from this one statement, or NEEDS_TRANSACTION when the pull has more to do.
  if (caughtUpOnly && (owner.length == 0 || cookie != watermark)) return NEEDS_TRANSACTION;
  if (owner.length == 0) claimGroup(groupID, userID);

  const plan = new PullPlan();
  let body: string;
  if (cookie == watermark) {
    plan.cookie = watermark;
    body =
      dialect == DIALECT_REPLICACHE
        ? '{"cookie":' + watermark.toString() + ',"lastMutationIDChanges":{},"patch":[]}'
        : '{"cookie":' + watermark.toString() + ',"unchanged":true}';
  } else {
    const visibility = parseVisibility(visibilityText);
    const reset = cookie == NULL_COOKIE || cookie < floor;
    if (reset) planReset(schema, visibility, dialect, watermark, plan);
    else planChanges(schema, visibility, dialect, cookie, watermark, maxRows, maxBytes, plan);
    const ids = lastMutationIDs(groupID, reset ? NULL_COOKIE : cookie, plan.cookie, plan);
    body =
      '{"cookie":' +
      plan.cookie.toString() +
      ',"lastMutationIDChanges":' +
      ids +
      (dialect == DIALECT_REPLICACHE ? ',"patch":[' : ',"rowsPatch":[') +
      plan.patch +
      "]}";
  }
  const meta = [
    plan.cookie.toString(),
    plan.reset ? "1" : "0",
    plan.included.toString(),
    plan.lastMutationIDs.toString(),
    watermark.toString(),
    floor.toString(),
    cookie == watermark ? "1" : "0",
  ];
  return meta.join(COLUMN_SEPARATOR) + ROW_SEPARATOR + body;
}
