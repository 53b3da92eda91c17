// The tables of query-aware pulls (membership, owed rows, the moves journal, quiet versions).
// A namespace gets them from the first pull that supplies queries, in that pull's transaction:
// one whose clients never pull by queries has none of them, so its install creates fewer
// tables, and its pulls and retention read none.
import { exec } from "../host";
import { QUIET_VERSIONS_TABLE } from "../retention";
import { deadKeysSql } from "./dead-keys";
import { deferredSql } from "./deferred";
import { journalSql } from "./journal";
import { membershipSql } from "./membership";
import { pendingSql } from "./pending";
import { rangesSql } from "./ranges";

function execAll(statements: Array<string>): void {
  for (let i = 0; i < statements.length; i++) exec(statements[i]);
}

/** Creates every query table the database lacks (an earlier engine's may lack the newer ones). */
export function createQueryTables(): void {
  execAll(membershipSql());
  execAll(pendingSql());
  execAll(journalSql());
  execAll(deferredSql());
  execAll(deadKeysSql());
  execAll(rangesSql());
  exec(QUIET_VERSIONS_TABLE);
}
