// Read-only views of the bookkeeping, for status pages and the CLI.
import { queryRows } from "./host";
import { CLIENTS, firstSeq, WATERMARK } from "./state";
import { jsonString, params } from "./text";

/** "watermark\tfloor\tchanges\tclients\tgroups". */
export function stateSummary(): string {
  const rows = queryRows(
    "SELECT " +
      WATERMARK +
      ", floor, (SELECT count(*) FROM _weir_changes WHERE tbl <> ''), " +
      "(SELECT count(*) FROM " +
      CLIENTS +
      "), " +
      "(SELECT count(*) FROM _weir_client_groups) FROM _weir_state WHERE id = 1",
  );
  if (rows.length == 0) return "";
  return rows[0].join("\t");
}

/** Changes after `since`, oldest first, as a JSON array of {version, table, key}. */
export function listChanges(since: i64, limit: i64): string {
  const rows = queryRows(
    "SELECT coalesce(json_group_array(json_object('version', version, 'table', tbl, 'key', json(pk))), '[]') " +
      "FROM (SELECT version, tbl, pk FROM _weir_changes WHERE seq >= ? AND tbl <> '' ORDER BY seq LIMIT ?)",
    params([firstSeq(since + 1).toString(), limit.toString()]),
  );
  return rows.length == 0 ? "[]" : rows[0][0];
}

/** Every client as a JSON array of {clientID, clientGroupID, userID, lastMutationID}. */
export function listClients(): string {
  const rows = queryRows(
    "SELECT coalesce(json_group_array(json_object('clientID', c.id, 'clientGroupID', c.group_id, " +
      "'userID', g.user_id, 'lastMutationID', c.last_mutation_id)), '[]') " +
      "FROM " +
      CLIENTS +
      " AS c LEFT JOIN _weir_client_groups AS g ON g.id = c.group_id",
  );
  return rows.length == 0 ? "[]" : rows[0][0];
}

/**
 * The last mutation id of each client of a group, as a JSON object by client id, when the group
 * belongs to `userID`; "{}" for an unknown group or another user's. Reads the group's clients only.
 */
export function groupMutationIDs(groupID: string, userID: string): string {
  const rows = queryRows(
    "SELECT coalesce(json_group_object(c.id, c.last_mutation_id), '{}') FROM " +
      CLIENTS +
      " AS c " +
      "JOIN _weir_client_groups AS g ON g.id = c.group_id WHERE c.group_id = ? AND g.user_id = ?",
    params([jsonString(groupID), jsonString(userID)]),
  );
  return rows.length == 0 ? "{}" : rows[0][0];
}
