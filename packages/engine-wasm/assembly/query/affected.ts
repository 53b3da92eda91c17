// Which stored queries the changes since a cookie can affect. A query is re-evaluated only when
// some changed row could enter or leave its result; every test below errs towards "affected".
//
// - Root: a changed row matters if its current values or any of its prior values since the
//   cookie (the prior table keeps the row as it was before each change) pass the root's
//   condition. A row that passes it neither before nor after is outside the filtered rows at
//   both ends, so no window over them (order, start, limit) moves.
// - Related subquery: a changed child row matters if its current or a prior value passes the
//   child's condition and correlates with a row of the parent's table that the query holds.
//   The held parents are the ones the result was built from: had one of them changed, its own
//   node's test would have said so.
// - EXISTS condition (conditions are read loosely above: an EXISTS passes every row): a changed
//   row of its table matters if its current or a prior value passes the subquery's condition
//   and its correlated columns name, by primary key, a row of the node's table that passes the
//   node's condition. Any other EXISTS (correlated on other columns, or with subqueries of its
//   own) is affected by any change to a table it reads.
// A visibility filter is a condition on the row's own columns, so a row that passes none of the
// query's conditions cannot matter to it either. Nor can a row no state of which passes it: where
// the filter narrows by keys, only the changes the caller's keys hold are read (ChangeScope), and
// they include a row's first change after a state it may see and its last change before one.

import { ChangeScope } from "../change-keys";
import { queryRows } from "../host";
import { keyMatch } from "../projection";
import { PRIOR_SEQ, priorTableName, Table } from "../schema";
import { firstSeq } from "../state";
import { ident, literal, params } from "../text";
import { Visibility } from "../visibility";
import { CONDITION_EXISTS, Condition, Correlation, onParentKey, QueryNode, readTables } from "./plan";
import { QuerySql } from "./sql";

function readsTouched(node: QueryNode, touched: Array<string>): bool {
  const tables: string[] = [];
  readTables(node, tables);
  for (let i = 0; i < tables.length; i++) if (touched.includes(tables[i])) return true;
  return false;
}

function hasExists(condition: Condition | null): bool {
  if (condition == null) return false;
  if (condition.kind == CONDITION_EXISTS) return true;
  for (let i = 0; i < condition.children.length; i++) if (hasExists(condition.children[i])) return true;
  return false;
}

class AffectedSql {
  sql: QuerySql = new QuerySql(new Visibility());
  parts: Array<string> = [] as string[];
  /** A touched table is read by an EXISTS condition: the query is affected without asking. */
  always: bool = false;

  constructor(
    public groupKey: string,
    public hash: string,
    public from: string,
    public to: string,
    public touched: Array<string>,
    public scope: ChangeScope,
  ) {
    this.sql.loose = true;
  }

  node(node: QueryNode, parent: QueryNode | null, correlation: Correlation | null): void {
    this.existsConditions(node, node.where);
    if (this.always) return;
    if (this.touched.includes(node.table.name)) this.changedRows(node, parent, correlation);
    for (let i = 0; i < node.related.length; i++) {
      this.node(node.related[i].node, node, node.related[i].correlation);
    }
  }

  // An EXISTS whose table changed: a changed row of it matters if its current or a prior value
  // passes the subquery's condition and correlates by key with a row of the node's table that
  // passes the node's condition (that row's own changes are the node's test). A subquery with
  // its own EXISTS or related subqueries, or correlated on other columns, is not looked into.
  private existsConditions(node: QueryNode, condition: Condition | null): void {
    if (condition == null || this.always) return;
    if (condition.kind != CONDITION_EXISTS) {
      for (let i = 0; i < condition.children.length; i++) this.existsConditions(node, condition.children[i]);
      return;
    }
    const subquery = condition.subquery!;
    if (!readsTouched(subquery, this.touched)) return;
    if (
      subquery.related.length > 0 ||
      hasExists(subquery.where) ||
      !onParentKey(condition.correlation, node.table)
    ) {
      this.always = true;
      return;
    }
    const read = this.scope.of(subquery.table, "_weir_c", this.from, this.to, this.sql.params);
    const live = this.correlatedBy(subquery, subquery.alias(), node, condition.correlation);
    const prior = this.correlatedBy(subquery, subquery.alias(), node, condition.correlation);
    this.parts.push(this.changes(subquery.table, subquery.alias(), read, live, prior));
  }

  private correlatedBy(
    subquery: QueryNode,
    alias: string,
    node: QueryNode,
    correlation: Correlation,
  ): string {
    let text = this.sql.condition(subquery.where, alias);
    const nodeAlias = node.alias();
    text += " AND EXISTS (SELECT 1 FROM " + ident(node.table.name) + " AS " + nodeAlias + " WHERE ";
    for (let i = 0; i < correlation.child.length; i++) {
      text +=
        nodeAlias +
        "." +
        ident(correlation.parent[i].substring(1)) +
        " = " +
        alias +
        "." +
        ident(correlation.child[i].substring(1)) +
        " AND ";
    }
    return text + this.sql.condition(node.where, nodeAlias) + ")";
  }

  // EXISTS a change of `table` read (`read`, on the log at _weir_c) whose current row or prior
  // row (at `alias`) passes.
  private changes(table: Table, alias: string, read: string, live: string, prior: string): string {
    return (
      "EXISTS (SELECT 1 FROM _weir_changes AS _weir_c WHERE " +
      read +
      " AND (EXISTS (SELECT 1 FROM " +
      ident(table.name) +
      " AS " +
      alias +
      " WHERE " +
      keyMatch(table, "_weir_c.pk", alias) +
      " AND " +
      live +
      ") OR EXISTS (SELECT 1 FROM " +
      priorTableName(table) +
      " AS " +
      alias +
      " WHERE " +
      alias +
      "." +
      PRIOR_SEQ +
      " = _weir_c.seq AND " +
      prior +
      ")))"
    );
  }

  // A change of the node's table in range whose current row or prior row passes.
  private changedRows(node: QueryNode, parent: QueryNode | null, correlation: Correlation | null): void {
    const read = this.scope.of(node.table, "_weir_c", this.from, this.to, this.sql.params);
    const alias = node.alias();
    const live = this.passes(node, alias, parent, correlation);
    const prior = this.passes(node, alias, parent, correlation);
    this.parts.push(this.changes(node.table, alias, read, live, prior));
  }

  // The node's condition, read loosely, and for a related node a held parent it correlates with.
  private passes(
    node: QueryNode,
    alias: string,
    parent: QueryNode | null,
    correlation: Correlation | null,
  ): string {
    let text = this.sql.condition(node.where, alias);
    if (parent == null) return text;
    const c = correlation!;
    const bound = this.sql.params;
    bound.push(this.groupKey);
    bound.push(this.hash);
    text +=
      " AND EXISTS (SELECT 1 FROM _weir_query_rows AS _weir_r JOIN " +
      ident(parent.table.name) +
      " AS _weir_p ON " +
      keyMatch(parent.table, "_weir_r.pk", "_weir_p") +
      " WHERE _weir_r.group_key = ? AND _weir_r.hash = ? AND _weir_r.tbl = " +
      literal(parent.table.name);
    for (let i = 0; i < c.child.length; i++) {
      text +=
        " AND _weir_p." +
        ident(c.parent[i].substring(1)) +
        " = " +
        alias +
        "." +
        ident(c.child[i].substring(1));
    }
    return text + ")";
  }
}

/** The tables the changes in (cookie, watermark] touched, of those `scope` reads (by default all). */
export function touchedTables(cookie: i64, watermark: i64, scope: ChangeScope | null = null): Array<string> {
  const from = firstSeq(cookie + 1).toString();
  const to = firstSeq(watermark + 1).toString();
  let rows: Array<Array<string>>;
  if (scope == null || !scope.keyed()) {
    rows = queryRows(
      "SELECT DISTINCT tbl FROM _weir_changes WHERE seq >= ? AND seq < ? AND tbl <> ''",
      params([from, to]),
    );
  } else {
    const bound: string[] = [];
    rows = queryRows("SELECT DISTINCT tbl FROM " + scope.rows(from, to, bound), params(bound));
  }
  const names: string[] = [];
  for (let i = 0; i < rows.length; i++) names.push(rows[i][0]);
  return names;
}

/**
 * Whether the changes with seq in [from, to) (the tables they touched: `touched`) can change
 * the result the group's query `hash` holds (`groupKey`: the group's key in the rows tables; both
 * JSON parameters). Only the changes `scope` reads are looked at (by default all of them).
 */
export function affected(
  root: QueryNode,
  groupKey: string,
  hash: string,
  from: string,
  to: string,
  touched: Array<string>,
  scope: ChangeScope = new ChangeScope(new Visibility()),
): bool {
  const test = new AffectedSql(groupKey, hash, from, to, touched, scope);
  test.node(root, null, null);
  if (test.always) return true;
  if (test.parts.length == 0) return false;
  const rows = queryRows("SELECT " + test.parts.join(" OR "), params(test.sql.params));
  return rows.length > 0 && rows[0][0] == "1";
}
