// What the parts of a cut answer tell besides its rows (pending.ts): the group's queries none of
// whose rows is still owed (`gotQueries`), and the cookie its `lastMutationIDChanges` were last
// complete at (`_weir_query_partial`), so that the last part reports every id the parts cover and
// no earlier part reports an id before its rows arrive.
import { exec, queryRows } from "../host";
import { params, parseI64 } from "../text";

/** Owed rows up to which `completeQueries` tells every complete query, by the owed rows. */
const FEW_OWED = 64;
/** With more owed, the queries it checks (the first in hash order), and the rows each may hold. */
const CHECKED_QUERIES = 64;
const CHECKED_ROWS = 256;

/**
 * The group's active queries none of whose rows is owed, as a JSON array of hashes (named while
 * rows are owed only as far as that is cheap to tell: the client learns of the rest with the
 * answer's last part, where none is owed). A few owed rows are looked up in each query's rows.
 * With more, a query's rows would be read to tell (queries times rows: seconds for a thousand
 * queries of ten thousand rows each), so only the first `CHECKED_QUERIES` queries that hold at
 * most `CHECKED_ROWS` rows are. A deferred query (deferred.ts) holds none of its rows yet.
 */
export function completeQueries(group: string, key: string, owing: bool): string {
  if (!owing) {
    return queryRows(
      "SELECT json_group_array(hash) FROM (SELECT hash FROM _weir_queries WHERE group_id = ? ORDER BY hash)",
      params([group]),
    )[0][0];
  }
  const few =
    queryRows(
      "SELECT count(*) FROM (SELECT 1 FROM _weir_query_pending WHERE group_key = ? LIMIT " +
        (FEW_OWED + 1).toString() +
        ")",
      params([key]),
    )[0][0] != (FEW_OWED + 1).toString();
  const waiting =
    " AND NOT EXISTS (SELECT 1 FROM _weir_deferred_queries AS x WHERE x.group_id = q.group_id AND x.hash = q.hash)";
  if (few) {
    return queryRows(
      "SELECT json_group_array(hash) FROM (SELECT hash FROM _weir_queries AS q WHERE q.group_id = ? AND NOT EXISTS " +
        "(SELECT 1 FROM _weir_query_pending AS p WHERE p.group_key = ? AND EXISTS (SELECT 1 FROM _weir_query_rows AS r " +
        "WHERE r.group_key = p.group_key AND r.hash = q.hash AND r.tbl = p.tbl AND r.pk = p.pk))" +
        waiting +
        " ORDER BY hash)",
      params([group, key]),
    )[0][0];
  }
  const rowsOf =
    "(SELECT r.tbl, r.pk FROM _weir_query_rows AS r WHERE r.group_key = ? AND r.hash = q.hash LIMIT " +
    (CHECKED_ROWS + 1).toString() +
    ")";
  return queryRows(
    "SELECT json_group_array(hash) FROM (SELECT hash FROM (SELECT group_id, hash FROM _weir_queries WHERE group_id = ? " +
      "ORDER BY hash LIMIT " +
      CHECKED_QUERIES.toString() +
      ") AS q WHERE (SELECT count(*) FROM " +
      rowsOf +
      ") <= " +
      CHECKED_ROWS.toString() +
      " AND NOT EXISTS (SELECT 1 FROM " +
      rowsOf +
      " AS s WHERE EXISTS (SELECT 1 FROM _weir_query_pending AS p WHERE p.group_key = ? AND p.tbl = s.tbl AND " +
      "p.pk = s.pk))" +
      waiting +
      " ORDER BY hash)",
    params([group, key, key, key]),
  )[0][0];
}

/**
 * The cookie the group's `lastMutationIDChanges` were last complete at, when an earlier answer
 * was cut (else `cookie`); a reset starts from none.
 */
export function idsSince(group: string, cookie: i64, reset: bool, nullCookie: i64): i64 {
  if (reset) return nullCookie;
  const rows = queryRows("SELECT since FROM _weir_query_partial WHERE group_id = ?", params([group]));
  return rows.length > 0 ? parseI64(rows[0][0]) : cookie;
}

/** Records where the ids are complete while rows are owed, or forgets it once none are. */
export function notePartial(group: string, more: bool, since: i64): void {
  if (!more) {
    exec("DELETE FROM _weir_query_partial WHERE group_id = ?", params([group]));
    return;
  }
  exec(
    "INSERT INTO _weir_query_partial (group_id, since) VALUES (?, ?) ON CONFLICT (group_id) DO UPDATE SET since = excluded.since",
    params([group, since.toString()]),
  );
}
