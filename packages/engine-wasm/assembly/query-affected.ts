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
// - Any change to a table an EXISTS condition reads affects the query (its conditions are read
//   loosely above: an EXISTS passes every row).
// A visibility filter is a condition on the row's own columns, so a row that passes none of the
// query's conditions cannot matter to it either.

import { queryRows } from "./host";
import { CONDITION_EXISTS, Condition, Correlation, QueryNode, readTables } from "./query-plan";
import { QuerySql } from "./query-sql";
import { PRIOR_SEQ, priorTableName, Table } from "./schema";
import { ident, literal, params } from "./text";
import { Visibility } from "./visibility";

/** The key of `table`'s row at `alias` equals the JSON array key in `keyRef`. */
function keyMatch(table: Table, alias: string, keyRef: string): string {
  const parts: string[] = [];
  for (let i = 0; i < table.primaryKey.length; i++) {
    parts.push(
      alias +
        "." +
        ident(table.primaryKey[i].name) +
        " = json_extract(" +
        keyRef +
        ", '$[" +
        i.toString() +
        "]')",
    );
  }
  return parts.join(" AND ");
}

/** Whether any table read inside one of the condition's EXISTS subqueries is in `touched`. */
function existsTouched(condition: Condition | null, touched: Array<string>): bool {
  if (condition == null) return false;
  if (condition.kind == CONDITION_EXISTS) {
    const tables: string[] = [];
    readTables(condition.subquery!, tables);
    for (let i = 0; i < tables.length; i++) if (touched.includes(tables[i])) return true;
    return false;
  }
  for (let i = 0; i < condition.children.length; i++) {
    if (existsTouched(condition.children[i], touched)) return true;
  }
  return false;
}

class AffectedSql {
  sql: QuerySql = new QuerySql(new Visibility());
  parts: Array<string> = [] as string[];
  /** A touched table is read by an EXISTS condition: the query is affected without asking. */
  always: bool = false;

  constructor(
    public group: string,
    public hash: string,
    public from: string,
    public to: string,
    public touched: Array<string>,
  ) {
    this.sql.loose = true;
  }

  node(node: QueryNode, parent: QueryNode | null, correlation: Correlation | null): void {
    if (existsTouched(node.where, this.touched)) this.always = true;
    if (this.always) return;
    if (this.touched.includes(node.table.name)) this.changedRows(node, parent, correlation);
    for (let i = 0; i < node.related.length; i++) {
      this.node(node.related[i].node, node, node.related[i].correlation);
    }
  }

  // EXISTS a change of the node's table in range whose current row or prior row passes.
  private changedRows(node: QueryNode, parent: QueryNode | null, correlation: Correlation | null): void {
    const table = node.table;
    const bound = this.sql.params;
    bound.push(this.from);
    bound.push(this.to);
    const alias = node.alias();
    const text =
      "EXISTS (SELECT 1 FROM _weir_changes AS _weir_c WHERE _weir_c.seq >= ? AND _weir_c.seq < ? AND _weir_c.tbl = " +
      literal(table.name) +
      " AND (EXISTS (SELECT 1 FROM " +
      ident(table.name) +
      " AS " +
      alias +
      " WHERE " +
      keyMatch(table, alias, "_weir_c.pk") +
      " AND " +
      this.passes(node, alias, parent, correlation) +
      ") OR EXISTS (SELECT 1 FROM " +
      priorTableName(table) +
      " AS " +
      alias +
      " WHERE " +
      alias +
      "." +
      PRIOR_SEQ +
      " = _weir_c.seq AND " +
      this.passes(node, alias, parent, correlation) +
      ")))";
    this.parts.push(text);
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
    bound.push(this.group);
    bound.push(this.hash);
    text +=
      " AND EXISTS (SELECT 1 FROM _weir_query_rows AS _weir_r JOIN " +
      ident(parent.table.name) +
      " AS _weir_p ON " +
      keyMatch(parent.table, "_weir_p", "_weir_r.pk") +
      " WHERE _weir_r.group_id = ? AND _weir_r.hash = ? AND _weir_r.tbl = " +
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

/**
 * Whether the changes with seq in [from, to) (the tables they touched: `touched`) can change
 * the result the group's query `hash` (JSON parameters) holds.
 */
export function affected(
  root: QueryNode,
  group: string,
  hash: string,
  from: string,
  to: string,
  touched: Array<string>,
): bool {
  const test = new AffectedSql(group, hash, from, to, touched);
  test.node(root, null, null);
  if (test.always) return true;
  if (test.parts.length == 0) return false;
  const rows = queryRows("SELECT " + test.parts.join(" OR "), params(test.sql.params));
  return rows.length > 0 && rows[0][0] == "1";
}
