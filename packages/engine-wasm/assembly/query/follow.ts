// Followers of a query-aware pull. After a commit, many client groups often hold the very same
// state: the same queries (hash and plan), of the same owner, at the same cookie, nothing owed.
// Their pulls would each evaluate the same changes and answer the same rows. A pull may name
// such groups as followers: the engine checks which of them hold the leader's state, and each of
// those takes the leader's membership changes (the rows whose holding moved, scratch kind 1)
// and the leader's new cookie, in a few set-based statements for all of them, instead of a pull
// of its own. A follower's answer is the leader's with its own lastMutationIDChanges.
//
// Equal state implies equal membership: a group at cookie c with nothing owed holds exactly
// what its queries hold at version c (the invariant every pull keeps, checked by the model test),
// so a follower's rows before the pull are the leader's, and the rows the leader's pull moved
// are the only ones where the two can differ after it.
import { COLUMN_SEPARATOR, execStatement, queryStatement, ROW_SEPARATOR, Statement } from "../host";
import { CLIENTS } from "../state";
import { jsonString, params } from "../text";

/** Scratch kind of a follower: tbl is empty and pk the group's id. */
const FOLLOWER = "2";

// The followers' rows among those the leader's pull moved are replaced by the leader's: each
// query's, then the group's with their counts (the leader's are settled already).
// A follower's rows are found by its key (FOLLOWER_KEY, at alias k of its scratch row f).
const FOLLOWER_KEY = " JOIN _weir_group_keys AS k ON k.group_id = f.pk";

/** Following's statements, built at first use (never, in a build without the query engine). */
class FollowStatements {
  /**
   * The followers (a JSON array of group ids, the host's extra parameter `followersParam`) that
   * hold the leader's state at `cookie`: owned by `user`, answered under the leader's visibility,
   * membership stored at `cookie`, nothing owed, the same transform version and the same queries,
   * hash for hash and plan for plan.
   */
  readonly eligible: Statement = new Statement(
    "INSERT INTO _weir_query_scratch (kind, tbl, pk, was_held) SELECT DISTINCT " +
      FOLLOWER +
      ", '', f.value, 0 FROM json_each(?) AS f JOIN _weir_client_groups AS c ON c.id = f.value AND c.user_id = ? " +
      "AND c.visibility IS ? " +
      "JOIN _weir_query_groups AS g ON g.group_id = f.value AND g.cookie = ? JOIN _weir_group_keys AS k ON " +
      "k.group_id = f.value JOIN _weir_query_groups AS l ON " +
      "l.group_id = ? WHERE f.type = 'text' AND f.value <> l.group_id AND g.transform_version IS l.transform_version " +
      "AND NOT EXISTS (SELECT 1 FROM _weir_query_partial AS p WHERE p.group_id = f.value) " +
      "AND (SELECT count(*) FROM _weir_queries AS q WHERE q.group_id = f.value) = " +
      "(SELECT count(*) FROM _weir_queries AS q WHERE q.group_id = l.group_id) " +
      "AND NOT EXISTS (SELECT 1 FROM _weir_queries AS q WHERE q.group_id = f.value AND NOT EXISTS (SELECT 1 FROM " +
      "_weir_queries AS lq WHERE lq.group_id = l.group_id AND lq.hash = q.hash AND lq.plan = q.plan)) " +
      "ON CONFLICT DO NOTHING",
  );
  readonly forgetQueryRows: Statement = new Statement(
    "DELETE FROM _weir_query_rows WHERE (group_key, hash, tbl, pk) IN (SELECT k.group_key, q.hash, m.tbl, m.pk " +
      "FROM _weir_query_scratch AS f" +
      FOLLOWER_KEY +
      ", _weir_queries AS q, _weir_query_scratch AS m WHERE f.kind = " +
      FOLLOWER +
      " AND q.group_id = ? AND m.kind = 1)",
  );
  readonly copyQueryRows: Statement = new Statement(
    "INSERT INTO _weir_query_rows (group_key, hash, tbl, pk) SELECT k.group_key, r.hash, r.tbl, r.pk FROM " +
      "_weir_query_scratch AS m JOIN _weir_queries AS q ON q.group_id = ? JOIN _weir_query_rows AS r ON " +
      "r.group_key = ? AND r.hash = q.hash AND r.tbl = m.tbl AND r.pk = m.pk JOIN _weir_query_scratch AS f " +
      "ON f.kind = " +
      FOLLOWER +
      FOLLOWER_KEY +
      " WHERE m.kind = 1",
  );
  readonly forgetGroupRows: Statement = new Statement(
    "DELETE FROM _weir_group_rows WHERE (group_key, tbl, pk) IN (SELECT k.group_key, m.tbl, m.pk FROM " +
      "_weir_query_scratch AS f" +
      FOLLOWER_KEY +
      ", _weir_query_scratch AS m WHERE f.kind = " +
      FOLLOWER +
      " AND m.kind = 1)",
  );
  readonly copyGroupRows: Statement = new Statement(
    "INSERT INTO _weir_group_rows (group_key, tbl, pk, refs) SELECT k.group_key, g.tbl, g.pk, g.refs FROM " +
      "_weir_query_scratch AS m JOIN _weir_group_rows AS g ON g.group_key = ? AND g.tbl = m.tbl AND g.pk = m.pk " +
      "JOIN _weir_query_scratch AS f ON f.kind = " +
      FOLLOWER +
      FOLLOWER_KEY +
      " WHERE m.kind = 1",
  );
  // A follower pulled under another visibility than the leader's would hold rows of both: it lends
  // none then (membership.ts).
  readonly moveCookies: Statement = new Statement(
    "UPDATE _weir_query_groups SET cookie = ?, resume_cookie = NULL, visibility = CASE WHEN visibility = ? THEN visibility END " +
      "WHERE group_id IN (SELECT pk FROM _weir_query_scratch WHERE kind = " +
      FOLLOWER +
      ")",
  );
  // Each follower's journal (journal.ts) notes the leader's moves at the new cookie, and
  // starts there when it had none.
  readonly noteMoves: Statement = new Statement(
    "INSERT INTO _weir_query_moves (group_key, tbl, pk, version) SELECT k.group_key, m.tbl, m.pk, ? FROM " +
      "_weir_query_scratch AS f" +
      FOLLOWER_KEY +
      ", _weir_query_scratch AS m WHERE f.kind = " +
      FOLLOWER +
      " AND m.kind = 1 AND m.was_held <> EXISTS (SELECT 1 FROM _weir_group_rows AS g WHERE g.group_key = ? AND " +
      "g.tbl = m.tbl AND g.pk = m.pk) ON CONFLICT (group_key, tbl, pk) DO UPDATE SET version = excluded.version",
  );
  readonly forgetBounds: Statement = new Statement(
    "DELETE FROM _weir_query_bounds WHERE group_id IN (SELECT pk FROM _weir_query_scratch WHERE kind = " +
      FOLLOWER +
      ")",
  );
  readonly copyBounds: Statement = new Statement(
    "INSERT INTO _weir_query_bounds (group_id, hash, i, value) SELECT f.pk, b.hash, b.i, b.value FROM " +
      "_weir_query_scratch AS f JOIN _weir_query_bounds AS b ON b.group_id = ? WHERE f.kind = " +
      FOLLOWER,
  );
  readonly startJournals: Statement = new Statement(
    "INSERT INTO _weir_query_journal (group_key, since) SELECT k.group_key, ? FROM _weir_query_scratch AS f" +
      FOLLOWER_KEY +
      " WHERE f.kind = " +
      FOLLOWER +
      " ON CONFLICT DO NOTHING",
  );
  /** Each follower's id, and the last mutation ids of its clients that moved in (after, upTo]. */
  readonly followerIds: Statement = new Statement(
    "SELECT json_quote(f.pk), '{' || coalesce((SELECT group_concat(json_quote(c.id) || ':' || " +
      "c.last_mutation_id, ',') FROM " +
      CLIENTS +
      " AS c WHERE c.group_id = f.pk AND c.version > ? AND " +
      "c.version <= ?), '') || '}' FROM _weir_query_scratch AS f WHERE f.kind = " +
      FOLLOWER,
  );
}

let builtFollowStatements: FollowStatements | null = null;

/** The statements and SQL text above, built at first use (never, in a build without the query engine). */
function followStatements(): FollowStatements {
  let built = builtFollowStatements;
  if (built == null) builtFollowStatements = built = new FollowStatements();
  return built;
}

/**
 * Moves the followers that hold the leader's state (before its pull) to the leader's state after
 * it, at `watermark`. `group` is the leader's id and `key` its key in the rows tables, as JSON
 * parameters; `visibilityParam` the identity of the leader's visibility for lending (as one;
 * "null": none) and `claimsParam` the one it answers under; `moved`: the leader's pull
 * moved rows (noted in the scratch table, which the caller empties afterwards). Answers a JSON
 * array of [groupID, lastMutationIDChanges] for the followers that followed ("" when none did,
 * and nothing was written to the scratch table).
 */
export function follow(
  group: string,
  key: string,
  userID: string,
  cookie: i64,
  watermark: i64,
  followersParam: string,
  moved: bool,
  visibilityParam: string = "null",
  claimsParam: string = "null",
): string {
  const sql = followStatements();
  const found = execStatement(
    sql.eligible,
    params([followersParam, jsonString(userID), claimsParam, cookie.toString(), group]),
  );
  if (found == 0) return "";
  if (moved) {
    execStatement(sql.forgetQueryRows, params([group]));
    execStatement(sql.copyQueryRows, params([group, key]));
    execStatement(sql.forgetGroupRows);
    execStatement(sql.copyGroupRows, params([key]));
    execStatement(sql.noteMoves, params([watermark.toString(), key]));
  }
  // A follower's windows hold the leader's rows, up to the leader's bounds (window-bound.ts).
  execStatement(sql.forgetBounds);
  execStatement(sql.copyBounds, params([group]));
  execStatement(sql.startJournals, params([watermark.toString()]));
  execStatement(sql.moveCookies, params([watermark.toString(), visibilityParam]));
  const rows = queryStatement(sql.followerIds, params([cookie.toString(), watermark.toString()]));
  if (rows.length == 0) return "[]";
  // Rows of "<group>\t<ids>": neither JSON text holds a raw tab or newline.
  return "[[" + rows.replaceAll(COLUMN_SEPARATOR, ",").replaceAll(ROW_SEPARATOR, "],[") + "]]";
}
