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
import { keyReads } from "./change-keys";
import { fail } from "./errors";
import { noQueryEngine, QUERY_ENGINE } from "./features";
import { COLUMN_SEPARATOR, exec, queryRows, queryStatement, ROW_SEPARATOR, Statement } from "./host";
import { planChanges } from "./pull-changes";
import { PullPlan } from "./pull-plan";
import { planReset } from "./pull-reset";
import { planPagedReset } from "./pull-reset-pages";
import { queryPull } from "./query/pull";
import { createQueryTables } from "./query/tables";
import { Schema } from "./schema";
import { CLIENTS, WATERMARK } from "./state";
import { jsonString, params, parseI64 } from "./text";
import { parseVisibility } from "./visibility";

/** The pull's statement where the query tables exist. */
class PullStatements {
  // The group's visibility is compared last: its column stays NULL for a group not yet pulled.
  // Built at first use, as the query engine's statements are: a lean build (features.ts) never
  // builds it.
  readonly pullState: Statement = new Statement(
    "SELECT " +
      WATERMARK +
      ", s.floor, g.user_id = ?, o.since IS NOT NULL, q.cookie, q.resume_cookie, g.visibility IS ? FROM _weir_state AS s " +
      "LEFT JOIN _weir_client_groups " +
      "AS g ON g.id = ? LEFT JOIN _weir_query_groups AS q ON q.group_id = g.id LEFT JOIN _weir_query_partial AS o " +
      "ON o.group_id = g.id WHERE s.id = 1",
  );
}

let builtPullStatements: PullStatements | null = null;

/** The statements and SQL text above, built at first use (never, in a build without the query engine). */
function pullStatements(): PullStatements {
  let built = builtPullStatements;
  if (built == null) builtPullStatements = built = new PullStatements();
  return built;
}
// The same row where the query tables do not exist (query/tables.ts): no group pulled by queries.
const PLAIN_PULL_STATE = new Statement(
  "SELECT " +
    WATERMARK +
    ", s.floor, g.user_id = ?, 0, NULL, NULL, g.visibility IS ? FROM _weir_state AS s " +
    "LEFT JOIN _weir_client_groups AS g ON g.id = ? WHERE s.id = 1",
);

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

/** `"clientID":lastMutationID` members for the group's clients whose ids moved in (after, upTo]. */
function lastMutationIDs(groupID: string, after: i64, upTo: i64, plan: PullPlan): string {
  const rows = queryRows(
    "SELECT json_quote(id), last_mutation_id FROM " +
      CLIENTS +
      " WHERE group_id = ? AND version > ? AND version <= ?",
    params([jsonString(groupID), after.toString(), upTo.toString()]),
  );
  const members: string[] = [];
  for (let i = 0; i < rows.length; i++) members.push(rows[i][0] + ":" + rows[i][1]);
  plan.lastMutationIDs = members.length;
  return "{" + members.join(",") + "}";
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
  queryTables: bool,
  followersParam: string = "",
  visibilityParam: string = "null",
  claimsParam: string = "null",
  pagedReset: bool = false,
): string {
  // One row: watermark, floor, whether the group is the user's (1), another's (0) or new (""),
  // whether query rows are owed to it (1), the cookie its query membership is at (none: it
  // never pulled with queries), the cookie a lost part of its last answer resumes from (none),
  // and whether its rows were answered under this pull's visibility.
  const state = queryStatement(
    QUERY_ENGINE && queryTables ? pullStatements().pullState : PLAIN_PULL_STATE,
    params([jsonString(userID), claimsParam, jsonString(groupID)]),
  );
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
  // Before anything is written: a lean build answers no pull by queries.
  if (!QUERY_ENGINE && !unchanged && byQueries) return noQueryEngine();
  if (owner.length == 0) claimGroup(groupID, userID);
  if (claimsMoved || owner.length == 0) {
    exec(
      "UPDATE _weir_client_groups SET visibility = ? WHERE id = ?",
      params([claimsParam, jsonString(groupID)]),
    );
  }

  const plan = new PullPlan();
  let body: string;
  if (QUERY_ENGINE && !unchanged && byQueries) {
    // The namespace's first pull by queries (only such a pull gets here without them).
    if (!queryTables) createQueryTables();
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
    if (reset) {
      // Keys the columns the filters narrow by, so that the pulls that follow read by them.
      const reads = keyReads(schema, visibility, watermark);
      // Only the full build pages resets: the lean one serves hosts whose drivers cannot call back.
      if (
        !QUERY_ENGINE ||
        !pagedReset ||
        !planPagedReset(schema, visibility, reads, format, watermark, floor, plan)
      )
        planReset(schema, visibility, format, watermark, plan);
    } else planChanges(schema, visibility, format, cookie, watermark, maxRows, maxBytes, plan);
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
