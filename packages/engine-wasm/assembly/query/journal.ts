// The moves journal: how a client that missed answers catches up without a reset. A group's
// membership is stored at one cookie, the last answer's; a client behind it (its socket dropped
// while answers went out, or the server restarted after sending them) holds the membership of
// an older cookie. What differs between the two is the rows whose holding moved in between,
// and the rows that changed since the client's cookie, which the change log tells. So each
// answer notes the rows whose holding it moved, with its cookie (`_weir_query_moves`, the
// latest cookie per row), and a pull from an older cookie owes those moved after it, with the
// held rows changed since it, as an incremental pull owes its own.
//
// The journal of a group is complete from `_weir_query_journal.since`: an answer that builds
// the rows anew (a reset) or whose parts a client may hold only some of (a cut answer, one
// continuing a cut one) starts it again at its cookie. A cookie below that, or below the
// floor (its changes pruned), still resets.
import { exec, queryRows } from "../host";
import { params } from "../text";

// A function, not a global: a build without the query engine (../features.ts) holds none of it.
export function journalSql(): Array<string> {
  return [
    "CREATE TABLE IF NOT EXISTS _weir_query_moves (group_key INTEGER NOT NULL, tbl TEXT NOT NULL, pk TEXT NOT NULL, " +
      "version INTEGER NOT NULL, PRIMARY KEY (group_key, tbl, pk)) WITHOUT ROWID",
    // Pruned by version as the floor rises.
    "CREATE INDEX IF NOT EXISTS _weir_query_moves_version ON _weir_query_moves (version)",
    "CREATE TABLE IF NOT EXISTS _weir_query_journal (group_key INTEGER PRIMARY KEY, since INTEGER NOT NULL)",
  ];
}

/** The version of moves noted by a pull whose cookie is not known yet (stamped as it ends). */
const UNSTAMPED = "-4";

const HELD_NOW =
  "EXISTS (SELECT 1 FROM _weir_group_rows AS g WHERE g.group_key = ? AND g.tbl = s.tbl AND g.pk = s.pk)";

/** Whether the group's journal tells every move after `cookie` (`key`: a JSON parameter). */
export function journalCovers(key: string, cookie: i64): bool {
  const rows = queryRows(
    "SELECT 1 FROM _weir_query_journal WHERE group_key = ? AND since <= ?",
    params([key, cookie.toString()]),
  );
  return rows.length > 0;
}

/**
 * Notes the rows whose holding this pull moved (scratch kind 1 whose holding differs now), once
 * the membership is settled.
 */
export function noteMoves(key: string): void {
  exec(
    "INSERT INTO _weir_query_moves (group_key, tbl, pk, version) SELECT ?, s.tbl, s.pk, " +
      UNSTAMPED +
      " FROM _weir_query_scratch AS s WHERE s.kind = 1 AND s.was_held <> " +
      HELD_NOW +
      " ON CONFLICT (group_key, tbl, pk) DO UPDATE SET version = excluded.version",
    params([key, key]),
  );
}

/**
 * Owes a client at `cookie` the rows whose holding moved after it: each is put if the group
 * holds it, and deleted otherwise (the client may have it).
 */
export function oweMissed(key: string, cookie: i64): void {
  exec(
    "INSERT INTO _weir_query_pending (group_key, tbl, pk, client_has) SELECT group_key, tbl, pk, 1 FROM " +
      "_weir_query_moves WHERE group_key = ? AND version > ? ON CONFLICT DO UPDATE SET client_has = 1",
    params([key, cookie.toString()]),
  );
}

/**
 * Stamps the pull's moves with the cookie its membership is stored at (`stored`; negative: none
 * a client holds). `restart`: the journal starts again there (see above); otherwise it is
 * started there when the group has none yet.
 */
export function stampMoves(key: string, stored: i64, restart: bool): void {
  // A membership stored at no client's cookie is reset by the group's next pull: no catch-up
  // goes through it.
  const since = stored < 0 ? I64.MAX_VALUE : stored;
  if (restart || stored < 0) {
    exec("DELETE FROM _weir_query_moves WHERE group_key = ?", params([key]));
    exec(
      "INSERT INTO _weir_query_journal (group_key, since) VALUES (?, ?) ON CONFLICT (group_key) DO UPDATE SET " +
        "since = excluded.since",
      params([key, since.toString()]),
    );
    return;
  }
  exec(
    "UPDATE _weir_query_moves SET version = ? WHERE group_key = ? AND version = " + UNSTAMPED,
    params([stored.toString(), key]),
  );
  exec(
    "INSERT INTO _weir_query_journal (group_key, since) VALUES (?, ?) ON CONFLICT DO NOTHING",
    params([key, since.toString()]),
  );
}

/** Forgets the moves at or below the floor: a cookie there resets. */
export function pruneMoves(floor: i64): void {
  exec("DELETE FROM _weir_query_moves WHERE version <= ? AND version >= 0", params([floor.toString()]));
}
