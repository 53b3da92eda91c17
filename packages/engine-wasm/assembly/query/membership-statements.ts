// The statements a group's membership runs (membership.ts), built once each, at first use: their
// text is long, and building it and finding its statement by it cost more, each pull, than
// running some of them. A build without the query engine (../features.ts) never builds them.
//
// Scratch kinds: 1 notes each row whose count moved in the pull, with whether the group held it
// before (CHANGED), but a row a fresh evaluation adds that the group holds already: its count only
// grows, so it stays held and is owed nothing. (Followers copy a leader's noted rows, follow.ts,
// but a pull that evaluates afresh puts queries, resets or continues a part: it leads none.) 3 and
// 4 hold one diff's moved rows (GONE, ADDED); below 0, the rows of one evaluation each.
import { Statement } from "../host";
import { Table } from "../schema";
import { literal } from "../text";

export const CHANGED = "1";

/** Scratch kinds of one diff's moved rows: those the query no longer holds, and those it holds anew. */
const GONE = "3";
const ADDED = "4";

/**
 * Finds the stored rows of a query that its evaluation no longer holds, among those `scope`
 * limits them to (a condition at alias r; "" for all), into scratch kind GONE; answers how many.
 */
function goneStatement(scope: string): Statement {
  return new Statement(
    "INSERT INTO _weir_query_scratch (kind, tbl, pk, was_held) SELECT " +
      GONE +
      ", r.tbl, r.pk, 1 FROM _weir_query_rows AS r WHERE r.group_key = ? AND r.hash = ?" +
      scope +
      " AND NOT EXISTS (SELECT 1 FROM _weir_query_scratch AS e WHERE e.kind = ? AND e.tbl = r.tbl AND e.pk = r.pk)",
  );
}

/** A diff's moved rows (scratch kinds GONE and ADDED) as a subquery of tbl and pk. */
function movedOf(kind: string): string {
  return "(SELECT tbl, pk FROM _weir_query_scratch WHERE kind = " + kind + ")";
}

/**
 * A diff's statements, built once (their text is long: building it and finding its statement by
 * it cost more, each pull, than running some of them), at first use: a build without the query
 * engine (../features.ts) never builds them.
 */
export class MembershipStatements {
  /** The evaluated rows the query did not hold (scratch kind ADDED), with whether the group held each. */
  readonly added: Statement = new Statement(
    "INSERT INTO _weir_query_scratch (kind, tbl, pk, was_held) SELECT " +
      ADDED +
      ", e.tbl, e.pk, EXISTS (SELECT 1 FROM _weir_group_rows AS g WHERE g.group_key = ? AND g.tbl = e.tbl " +
      "AND g.pk = e.pk)" +
      fresh(),
  );
  /** Notes each moved row (scratch kind 1), keeping whether the group held it when it first moved. */
  readonly note: Statement = new Statement(
    "INSERT INTO _weir_query_scratch (kind, tbl, pk, was_held) SELECT 1, tbl, pk, was_held FROM " +
      "_weir_query_scratch WHERE kind IN (" +
      GONE +
      ", " +
      ADDED +
      ") ON CONFLICT DO NOTHING",
  );
  /** Counts down the rows the query no longer holds... */
  readonly release: Statement = new Statement(
    "UPDATE _weir_group_rows SET refs = refs - 1 WHERE group_key = ? AND (tbl, pk) IN " + movedOf(GONE),
  );
  /** ...and forgets them as the query's. */
  readonly forget: Statement = new Statement(
    "DELETE FROM _weir_query_rows WHERE group_key = ? AND hash = ? AND (tbl, pk) IN " + movedOf(GONE),
  );
  readonly addRows: Statement = new Statement(
    "INSERT INTO _weir_group_rows (group_key, tbl, pk, refs) SELECT ?, tbl, pk, 1 FROM " +
      movedOf(ADDED) +
      " WHERE 1 ON CONFLICT (group_key, tbl, pk) DO UPDATE SET refs = refs + 1",
  );
  readonly keepRows: Statement = new Statement(
    "INSERT INTO _weir_query_rows (group_key, hash, tbl, pk) SELECT ?, ?, tbl, pk FROM " +
      movedOf(ADDED) +
      " WHERE 1 ON CONFLICT DO NOTHING",
  );
  readonly clear: Statement = new Statement(
    "DELETE FROM _weir_query_scratch WHERE kind IN (" + GONE + ", " + ADDED + ")",
  );
  /** Every stored row of the query is compared. */
  readonly whole: Statement = goneStatement("");
  /** Only the stored rows among those of a scratch kind (`?`): those `letGo` names. */
  readonly among: Statement = goneStatement(
    " AND (r.tbl, r.pk) IN (SELECT tbl, pk FROM _weir_query_scratch WHERE kind = ?)",
  );
  /** A range's rows (scratch kind `?`), new to the query: those new to the group noted as moved... */
  readonly noteFound: Statement = new Statement(
    "INSERT INTO _weir_query_scratch (kind, tbl, pk, was_held) SELECT " +
      CHANGED +
      ", e.tbl, e.pk, 0 FROM _weir_query_scratch AS e WHERE e.kind = ? AND NOT EXISTS (SELECT 1 FROM " +
      "_weir_group_rows AS g WHERE g.group_key = ? AND g.tbl = e.tbl AND g.pk = e.pk) ON CONFLICT DO NOTHING",
  );
  /** ...kept as the query's... */
  readonly keepFound: Statement = new Statement(
    "INSERT INTO _weir_query_rows (group_key, hash, tbl, pk) SELECT ?, ?, tbl, pk FROM _weir_query_scratch " +
      "WHERE kind = ? ON CONFLICT DO NOTHING",
  );
  /** ...and counted in the group's. */
  readonly countFound: Statement = new Statement(
    "INSERT INTO _weir_group_rows (group_key, tbl, pk, refs) SELECT ?, tbl, pk, 1 FROM _weir_query_scratch " +
      "WHERE kind = ? ON CONFLICT (group_key, tbl, pk) DO UPDATE SET refs = refs + 1",
  );
  readonly changedScopes: Map<string, Statement> = new Map<string, Statement>();
}

let builtMembershipStatements: MembershipStatements | null = null;

export function membershipStatements(): MembershipStatements {
  let built = builtMembershipStatements;
  if (built == null) builtMembershipStatements = built = new MembershipStatements();
  return built;
}

/** The scratch rows a query holds that it did not hold before. */
function fresh(): string {
  return (
    " FROM _weir_query_scratch AS e WHERE e.kind = ? AND NOT EXISTS (SELECT 1 FROM _weir_query_rows AS r " +
    "WHERE r.group_key = ? AND r.hash = ? AND r.tbl = e.tbl AND r.pk = e.pk)"
  );
}

/**
 * Only the stored rows among those of `table` changed by the changes read (`read`, a condition
 * on the log at _weir_c whose parameters are the scope's): the rest stay as they are. Naming the
 * table lets SQLite seek each changed key in the stored rows instead of scanning the query's rows.
 */
export function changedScope(table: Table, read: string): Statement {
  const scopes = membershipStatements().changedScopes;
  if (scopes.has(read)) return scopes.get(read);
  const changed = " IN (SELECT _weir_c.pk FROM _weir_changes AS _weir_c WHERE " + read + ")";
  const scope = goneStatement(" AND r.tbl = " + literal(table.name) + " AND r.pk" + changed);
  scopes.set(read, scope);
  return scope;
}
