// A group's old rows, let go of a bounded number a pull. A reset builds the group's rows anew:
// deleting the ones it held first would take a step as long as they are many (800,000 query rows:
// over 100 ms). Instead the group takes a new key (membership.ts, `_weir_group_keys`), every row
// of the old one is unreachable at once (every read goes through a group's key), and the old key
// is named here. Each query-aware pull that does work deletes up to DEAD_ROWS_A_PULL of those
// rows, the oldest key first, and forgets a key once none of its rows is left. A group holds one
// old key at most: one that resets again before its last was collected collects it in full
// first, as a reset did before. Keys only grow, so no group is ever given a dead one.
import { exec, queryRows } from "../host";
import { jsonString, params } from "../text";

/** The rows of dead keys one pull deletes, over every table (a few ms). */
const DEAD_ROWS_A_PULL: i64 = 16_384;

export function deadKeysSql(): Array<string> {
  return [
    "CREATE TABLE IF NOT EXISTS _weir_dead_group_keys (group_key INTEGER PRIMARY KEY, group_id TEXT NOT NULL)",
  ];
}

/**
 * The tables keyed by a group's key, each with the rest of its primary key (a function, not a
 * global: a build without the query engine, ../features.ts, holds none of it).
 */
function keyedTables(): string[][] {
  return [
    ["_weir_query_rows", "hash, tbl, pk"],
    ["_weir_group_rows", "tbl, pk"],
    ["_weir_query_pending", "tbl, pk"],
    ["_weir_query_sent", "tbl, pk"],
    ["_weir_query_moves", "tbl, pk"],
  ];
}

/**
 * Gives the group (a JSON parameter) a new key in place of `key`, whose rows it no longer holds;
 * answers the new key. The group's older dead key, if any, is collected in full first.
 */
export function rekey(group: string, key: string): string {
  const older = queryRows("SELECT group_key FROM _weir_dead_group_keys WHERE group_id = ?", params([group]));
  for (let i = 0; i < older.length; i++) collectKey(older[i][0], I64.MAX_VALUE);
  exec("INSERT INTO _weir_dead_group_keys (group_key, group_id) VALUES (?, ?)", params([key, group]));
  exec(
    "UPDATE _weir_group_keys SET group_key = (SELECT max(group_key) + 1 FROM _weir_group_keys) WHERE group_id = ?",
    params([group]),
  );
  return queryRows("SELECT group_key FROM _weir_group_keys WHERE group_id = ?", params([group]))[0][0];
}

/** Deletes up to DEAD_ROWS_A_PULL rows of dead keys. */
export function collectDead(): void {
  let budget = DEAD_ROWS_A_PULL;
  const keys = queryRows("SELECT group_key FROM _weir_dead_group_keys ORDER BY group_key LIMIT 4");
  for (let i = 0; i < keys.length && budget > 0; i++) budget -= collectKey(keys[i][0], budget);
}

/** Deletes up to `budget` rows of dead key `key`, forgetting the key once none is left; answers how many. */
function collectKey(key: string, budget: i64): i64 {
  let deleted: i64 = 0;
  const keyed = keyedTables();
  for (let t = 0; t < keyed.length; t++) {
    const left = budget - deleted;
    const table = keyed[t][0];
    const rest = keyed[t][1];
    // The key's rows up to the `left`-th in key order, found by walking that many and deleted as
    // a range of the primary key: the work is the rows deleted, not the rows the key holds.
    const last =
      left == I64.MAX_VALUE
        ? new Array<Array<string>>(0)
        : queryRows(
            "SELECT json_array(" +
              rest +
              ") FROM " +
              table +
              " WHERE group_key = ? ORDER BY " +
              rest +
              " LIMIT 1 OFFSET " +
              (left - 1).toString(),
            params([key]),
          );
    if (last.length == 0) {
      deleted += <i64>exec("DELETE FROM " + table + " WHERE group_key = ?", params([key]));
      continue;
    }
    const columns = rest.split(", ");
    const bound: string[] = [key];
    let upTo = "";
    for (let i = 0; i < columns.length; i++) {
      upTo += (i > 0 ? ", " : "") + "json_extract(?, '$[" + i.toString() + "]')";
      bound.push(jsonString(last[0][0]));
    }
    deleted += <i64>(
      exec(
        "DELETE FROM " + table + " WHERE group_key = ? AND (" + rest + ") <= (" + upTo + ")",
        params(bound),
      )
    );
    // The table may hold more: the key is not done.
    return deleted;
  }
  exec("DELETE FROM _weir_query_journal WHERE group_key = ?", params([key]));
  exec("DELETE FROM _weir_dead_group_keys WHERE group_key = ?", params([key]));
  return deleted;
}
