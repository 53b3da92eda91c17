// Groups alike share their hydration. A query evaluated afresh (just added to a group, or on a
// reset) takes its rows from another group that holds the same query (hash and plan) with its
// membership at the watermark, built under the same visibility, while the log holds no
// uncommitted changes. Such a group holds exactly the query's result now (the invariant every
// pull keeps, checked by the model test), so copying its rows answers what evaluating would, at
// a fraction of the work. A reset of a group whose queries a lender holds all of, and no other,
// copies that group's rows whole, with their counts.
//
// A group's stored visibility (in _weir_query_groups) is the host's identity of the filters and
// values its rows were all built under; it is NULL when they may mix several (a pull under
// another visibility than its reset's), and such a group lends nothing until it resets. Lenders
// are found among the first LENDER_CANDIDATES groups holding the query's hash, so a hydration
// never scans every group that holds a popular query.
import { execStatement, queryStatement, Statement } from "./host";
import { params } from "./text";

const LENDER_CANDIDATES = 32;

// The conditions a lender meets, for candidate d: parameters watermark, visibility.
const LENDS =
  "JOIN _weir_query_groups AS g ON g.group_id = d.group_id JOIN _weir_group_keys AS k ON k.group_id = d.group_id " +
  "WHERE g.cookie = ? AND g.visibility = ? AND (SELECT tbl = '' FROM _weir_changes ORDER BY seq DESC LIMIT 1)";

/** Parameters: key, hash, hash, group, watermark, visibility, group, hash. */
const LEND_ROWS = new Statement(
  "INSERT INTO _weir_query_rows (group_key, hash, tbl, pk) SELECT ?, r.hash, r.tbl, r.pk FROM _weir_query_rows " +
    "AS r WHERE r.hash = ? AND r.group_key = (SELECT k.group_key FROM (SELECT group_id, plan FROM _weir_queries " +
    "WHERE hash = ? AND group_id <> ? LIMIT " +
    LENDER_CANDIDATES.toString() +
    ") AS d " +
    LENDS +
    " AND d.plan = (SELECT plan FROM _weir_queries WHERE group_id = ? AND hash = ?) LIMIT 1) ON CONFLICT DO NOTHING",
);

/**
 * A group holding the same queries as the group, hash for hash and plan for plan, and no other.
 * Parameters: hash (one of the group's queries), group, watermark, visibility, the group's count
 * of queries, group. Answers its key, or nothing.
 */
const TWIN = new Statement(
  "SELECT k.group_key FROM (SELECT group_id FROM _weir_queries WHERE hash = ? AND group_id <> ? LIMIT " +
    LENDER_CANDIDATES.toString() +
    ") AS d " +
    LENDS +
    " AND (SELECT count(*) FROM _weir_queries AS l WHERE l.group_id = d.group_id) = ? AND NOT EXISTS (SELECT 1 " +
    "FROM _weir_queries AS q WHERE q.group_id = ? AND NOT EXISTS (SELECT 1 FROM _weir_queries AS l WHERE " +
    "l.group_id = d.group_id AND l.hash = q.hash AND l.plan = q.plan)) LIMIT 1",
);
const COPY_QUERY_ROWS = new Statement(
  "INSERT INTO _weir_query_rows (group_key, hash, tbl, pk) SELECT ?, hash, tbl, pk FROM _weir_query_rows WHERE group_key = ?",
);
const COPY_GROUP_ROWS = new Statement(
  "INSERT INTO _weir_group_rows (group_key, tbl, pk, refs) SELECT ?, tbl, pk, refs FROM _weir_group_rows WHERE group_key = ?",
);

/**
 * Copies the rows of the group's query `hash` (which holds none yet) from a group that may lend
 * them. `group` (the group's id), `key` (its key in the rows tables) and `hash` are JSON
 * parameters, `visibility` the pull's identity as one ("null": the host gave none, and nothing is
 * lent). Answers the rows copied (0: none was lent, or the result is empty; either way the caller
 * evaluates).
 */
export function lendRows(
  group: string,
  key: string,
  hash: string,
  watermark: string,
  visibility: string,
): i64 {
  if (visibility == "null") return 0;
  return <i64>execStatement(LEND_ROWS, params([key, hash, hash, group, watermark, visibility, group, hash]));
}

/**
 * Copies every query row and group row of the group (which holds none) from a group holding the
 * same `count` queries, one of which is `hash`, when one may lend them. Answers the query rows
 * copied, or -1 when none could.
 */
export function lendAll(
  group: string,
  key: string,
  hash: string,
  count: i32,
  watermark: string,
  visibility: string,
): i64 {
  if (visibility == "null") return -1;
  const twin = queryStatement(TWIN, params([hash, group, watermark, visibility, count.toString(), group]));
  if (twin.length == 0) return -1;
  const rows = <i64>execStatement(COPY_QUERY_ROWS, params([key, twin]));
  execStatement(COPY_GROUP_ROWS, params([key, twin]));
  return rows;
}
