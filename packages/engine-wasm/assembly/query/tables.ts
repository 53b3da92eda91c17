// The tables of query-aware pulls (membership, owed rows, the moves journal, quiet versions).
// A namespace gets them from the first pull that supplies queries, in that pull's transaction:
// one whose clients never pull by queries has none of them, so its install creates fewer
// tables, and its pulls and retention read none.
import { QUERY_TABLES_PROBE } from "../../src/abi";
import { exec, queryRows } from "../host";
import { QUIET_VERSIONS_TABLE } from "../retention";
import { JOURNAL_SQL } from "./journal";
import { MEMBERSHIP_SQL } from "./membership";
import { PENDING_SQL } from "./pending";

/** Creates every query table the database lacks (an earlier engine's may lack the newer ones). */
export function createQueryTables(): void {
  for (let i = 0; i < MEMBERSHIP_SQL.length; i++) exec(MEMBERSHIP_SQL[i]);
  for (let i = 0; i < PENDING_SQL.length; i++) exec(PENDING_SQL[i]);
  for (let i = 0; i < JOURNAL_SQL.length; i++) exec(JOURNAL_SQL[i]);
  exec(QUIET_VERSIONS_TABLE);
}

/** Whether the database has the query tables (they are created together). */
export function hasQueryTables(): bool {
  return queryRows(QUERY_TABLES_PROBE).length > 0;
}
