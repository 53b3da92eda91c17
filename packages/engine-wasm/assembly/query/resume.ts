// Resumable answers. An answer that sends rows owed to a group (a part of an answer cut by the
// pull caps, the last part included) keeps, until the group's next pull, the rows it sent with
// whether the client had each before (`_weir_query_sent`), and the cookie it was asked with
// (`_weir_query_groups.resume_cookie`, with `resume_since`, the cookie the client's
// lastMutationIDChanges were complete at then). A pull from that cookie comes from a client that
// lost that answer: instead of a reset, its rows are owed again as they were before it, and the
// pull goes on from the group's membership as an incremental pull does. So a lost part costs that
// part again, never the parts the client already holds. Any other pull forgets the kept rows: its
// cookie says the client got them, or it resets.
import { exec } from "../host";
import { params } from "../text";

/** The sent rows' table (a function: a build without the query engine, ../features.ts, holds none of its text). */
export function sentTable(): string {
  return (
    "CREATE TABLE IF NOT EXISTS _weir_query_sent (group_key INTEGER NOT NULL, tbl TEXT NOT NULL, pk TEXT NOT NULL, " +
    "client_has INTEGER NOT NULL, PRIMARY KEY (group_key, tbl, pk)) WITHOUT ROWID"
  );
}

/** The "no cookie" of `resume_cookie` as the pull reads it. */
export const NO_RESUME: i64 = -2;

/**
 * Owes the rows of the group's last answer again, each with whether the client had it before
 * that answer, and restores where its ids were complete. `group` and `key` are JSON parameters.
 */
export function resumeOwed(group: string, key: string): void {
  exec(
    "INSERT INTO _weir_query_pending (group_key, tbl, pk, client_has) SELECT group_key, tbl, pk, client_has FROM " +
      "_weir_query_sent WHERE group_key = ? ON CONFLICT DO UPDATE SET client_has = excluded.client_has",
    params([key]),
  );
  exec(
    "INSERT INTO _weir_query_partial (group_id, since) SELECT group_id, resume_since FROM _weir_query_groups " +
      "WHERE group_id = ? ON CONFLICT (group_id) DO UPDATE SET since = excluded.since",
    params([group]),
  );
}

/** Forgets the rows kept of the group's last answer. */
export function forgetSent(key: string): void {
  exec("DELETE FROM _weir_query_sent WHERE group_key = ?", params([key]));
}

/**
 * Keeps owed rows an answer sends, with those it kept so far (its caller forgot the answer
 * before's, `forgetSent`): the owed rows of the group (JSON parameter `key`) that `cut` (a
 * condition on them, with `cutParams`) picks.
 */
export function keepSent(key: string, cut: string, cutParams: Array<string>): void {
  const bound: string[] = [key];
  for (let i = 0; i < cutParams.length; i++) bound.push(cutParams[i]);
  exec(
    "INSERT INTO _weir_query_sent (group_key, tbl, pk, client_has) SELECT group_key, tbl, pk, client_has FROM " +
      "_weir_query_pending WHERE group_key = ?" +
      cut,
    params(bound),
  );
}
