// A query with related subqueries and no EXISTS or root limit (`subtreePlan`: the plans read in
// ranges, an item with its tags, a tag with its item), kept up to date after writes among the rows
// the writes can have moved, instead of evaluated again whole. A related row is held through the
// parent rows its correlated columns name. So a row whose place in the result moved is one the
// writes changed; one below a candidate, correlated with the parent's values now or, where the
// correlation is on other columns than the parent's key (which a write to the parent moves),
// before a change (its prior row, which the log keeps); or, under a limit, one of the first rows
// of a parent a changed row had, before or after the change. Those are the candidates, found a
// level at a time from the root down. Each is held when it passes its node's condition (and limit) and a
// parent it correlates with is held, up to the root: a lookup by key a level for a one-to-many
// relation, by the parent's correlated columns for a many-to-one one (an index is derived for
// them, indexes.ts). A row of a table several nodes read is held when one of them holds it. The
// query's stored rows among the candidates are diffed against those it holds now, and the rest
// stay as they are. A write so costs the rows it can have moved, not the query: every item of
// 20,000 with its tags is not read again on a write to one of them, and a query read in ranges
// takes the total budget over them (limits.ts).
import { ChangeScope } from "../change-keys";
import { keyBound, keyIn } from "../keyset-window";
import { keyMatch } from "../projection";
import { PRIOR_SEQ, priorTableName, Table } from "../schema";
import { ident, literal, unionAll } from "../text";
import { workTerm } from "./limits";
import { Membership } from "./membership";
import { Correlation, onParentKey, QueryNode } from "./plan";
import { rangedPlan } from "./root-sql";
import { QuerySql } from "./sql";
import { columnList, correlated, keyArray, limitValue, ordering } from "./sql-terms";

/** Whether the plan's rows are kept up to date among its changed rows and the rows below them. */
export function subtreePlan(node: QueryNode): bool {
  return node.related.length > 0 && rangedPlan(node);
}

/**
 * Brings the query's rows up to date with the changes in [from, to) (sequence numbers) that
 * `scope` reads, for a `subtreePlan`; `through`: only those under root rows up to that key (a
 * JSON array), where the query holds the rows of its ranges so far (ranges.ts). The caller meters
 * it (meterQuery).
 */
export function refreshSubtrees(
  m: Membership,
  hash: string,
  plan: QueryNode,
  from: i64,
  to: i64,
  scope: ChangeScope,
  through: string = "",
): void {
  const among = m.nextKind();
  m.scratched = true;
  addCandidates(m, plan, null, among, from.toString(), to.toString(), scope);
  const sql = new SubtreeSql(m.visibility);
  const held: string[] = [];
  sql.heldAmong(plan, [], [], among, through, held);
  m.evaluateAmong(hash, among, unionAll(held), sql.params);
}

/**
 * Puts the candidates of `node` and of the nodes below it in scratch kind `kind`: its table's
 * changed rows, the rows correlated with its parent's candidates, and under a limit the rows that
 * may enter or leave the first rows of a parent a changed row had, before or after the change.
 */
function addCandidates(
  m: Membership,
  node: QueryNode,
  parent: Parent | null,
  kind: string,
  from: string,
  to: string,
  scope: ChangeScope,
): void {
  const table = node.table;
  const alias = node.alias();
  const name = literal(table.name);
  const bound: string[] = [];
  const parts: string[] = [
    "SELECT " +
      name +
      " AS t, _weir_c.pk AS k FROM _weir_changes AS _weir_c WHERE " +
      scope.of(table, "_weir_c", from, to, bound),
  ];
  if (parent != null && !onParentKey(parent.correlation, parent.node.table)) {
    parts.push(belowByValues(node, parent, kind, from, to, scope, bound));
    if (node.limit.length > 0)
      parts.push(siblingsOfChanged(m, node, parent.correlation, from, to, scope, bound));
  } else if (parent != null) {
    const c = parent.correlation;
    const key = parent.node.table.primaryKey;
    // The rows below the parent's candidates: its key's values are the correlated columns'.
    const joined: string[] = [];
    for (let i = 0; i < c.child.length; i++) {
      let at = 0;
      while ("#" + key[at].name != c.parent[i]) at++;
      joined.push(
        alias +
          "." +
          ident(c.child[i].substring(1)) +
          " = json_extract(_weir_s.pk, '$[" +
          at.toString() +
          "]')",
      );
    }
    bound.push(kind);
    parts.push(
      "SELECT " +
        name +
        ", " +
        keyArray(table, alias) +
        " FROM _weir_query_scratch AS _weir_s CROSS JOIN " +
        ident(table.name) +
        " AS " +
        alias +
        " WHERE _weir_s.kind = ? AND _weir_s.tbl = " +
        literal(parent.node.table.name) +
        " AND " +
        workTerm(node, alias) +
        joined.join(" AND "),
    );
    if (node.limit.length > 0) parts.push(siblingsOfChanged(m, node, c, from, to, scope, bound));
  }
  // Candidates are not rows the query holds: they count toward no budget of rows.
  m.scratchRows(unionAll(parts), bound, kind, false);
  for (let i = 0; i < node.related.length; i++) {
    addCandidates(
      m,
      node.related[i].node,
      new Parent(node, node.related[i].correlation),
      kind,
      from,
      to,
      scope,
    );
  }
}

/**
 * The rows of `node`'s table correlated with a candidate of its parent's table (scratch kind
 * `kind`) by the parent's values now, or before a change (its prior row): a correlation on other
 * columns than the parent's key, which a write to the parent moves.
 */
function belowByValues(
  node: QueryNode,
  parent: Parent,
  kind: string,
  from: string,
  to: string,
  scope: ChangeScope,
  bound: Array<string>,
): string {
  const c = parent.correlation;
  const table = node.table;
  const above = parent.node.table;
  const alias = node.alias();
  const columns = columnList(c.child, alias);
  bound.push(kind);
  const text =
    "SELECT " +
    literal(table.name) +
    ", " +
    keyArray(table, alias) +
    " FROM " +
    ident(table.name) +
    " AS " +
    alias +
    " WHERE " +
    workTerm(node, alias) +
    (c.child.length == 1 ? columns : "(" + columns + ")") +
    " IN (SELECT " +
    columnList(c.parent, "_weir_n") +
    " FROM _weir_query_scratch AS _weir_s JOIN " +
    ident(above.name) +
    " AS _weir_n ON " +
    keyMatch(above, "_weir_s.pk", "_weir_n") +
    " WHERE _weir_s.kind = ? AND _weir_s.tbl = " +
    literal(above.name) +
    " UNION ";
  return text + priorValues(above, c.parent, from, to, scope, bound) + ")";
}

/**
 * A SELECT of `columns` (plan tokens) of the rows of `table` as they were before each of its
 * changes in [from, to) that `scope` reads (the prior rows the log keeps); its parameters go to
 * `bound`.
 */
function priorValues(
  table: Table,
  columns: Array<string>,
  from: string,
  to: string,
  scope: ChangeScope,
  bound: Array<string>,
): string {
  return (
    "SELECT " +
    columnList(columns, "_weir_b") +
    " FROM _weir_changes AS _weir_c JOIN " +
    priorTableName(table) +
    " AS _weir_b ON _weir_b." +
    PRIOR_SEQ +
    " = _weir_c.seq WHERE " +
    scope.of(table, "_weir_c", from, to, bound)
  );
}

/**
 * The rows of a limited node's table that may enter or leave a parent's first rows: of each parent
 * (correlated columns) a row the changes changed had, now or before the change, the first rows
 * in its order that pass its condition, as many as its limit and the changes of its table. A row
 * its parent held before is among them still: only a changed row can have come before it since.
 */
function siblingsOfChanged(
  m: Membership,
  node: QueryNode,
  c: Correlation,
  from: string,
  to: string,
  scope: ChangeScope,
  bound: Array<string>,
): string {
  const table = node.table;
  const alias = node.alias();
  const columns = columnList(c.child, alias);
  // Parameters bind in the order their `?` appear: the source's, the changes', the condition's,
  // the count's.
  const sql = new QuerySql(m.visibility);
  let text =
    "SELECT " +
    literal(table.name) +
    ", k FROM (SELECT " +
    keyArray(table, alias) +
    " AS k, row_number() OVER (PARTITION BY " +
    columns +
    " ORDER BY " +
    ordering(node, alias) +
    ") AS _weir_rn FROM " +
    sql.source(table) +
    " AS " +
    alias +
    " WHERE " +
    workTerm(node, alias) +
    (c.child.length == 1 ? columns : "(" + columns + ")") +
    " IN (SELECT " +
    columnList(c.child, "_weir_n") +
    " FROM _weir_changes AS _weir_c JOIN " +
    ident(table.name) +
    " AS _weir_n ON " +
    keyMatch(table, "_weir_c.pk", "_weir_n") +
    " WHERE " +
    scope.of(table, "_weir_c", from, to, sql.params) +
    " UNION ";
  text += priorValues(table, c.child, from, to, scope, sql.params) + ") AND ";
  text += sql.condition(node.where, alias);
  sql.params.push(from);
  sql.params.push(to);
  text +=
    ") WHERE _weir_rn <= " +
    limitValue(node) +
    " + (SELECT count(*) FROM _weir_changes WHERE seq >= ? AND seq < ? AND tbl = " +
    literal(table.name) +
    ")";
  for (let i = 0; i < sql.params.length; i++) bound.push(sql.params[i]);
  return text;
}

/** A node's parent, with its correlation to the node. */
class Parent {
  constructor(
    public node: QueryNode,
    public correlation: Correlation,
  ) {}
}

class SubtreeSql extends QuerySql {
  /**
   * Adds to `into` a SELECT per node, from `node` down, of its candidates (scratch kind `among`)
   * that the query holds now, "<table>\t<key>"; `ancestors` are the node's, nearest last, and
   * `links` their correlations to the node below each.
   */
  heldAmong(
    node: QueryNode,
    ancestors: Array<QueryNode>,
    links: Array<Correlation>,
    among: string,
    through: string,
    into: Array<string>,
  ): void {
    const alias = node.alias();
    // Parameters bind in the order their `?` appear: the source's, the kind, the conditions'.
    let text =
      "SELECT " +
      literal(node.table.name) +
      " AS t, " +
      keyArray(node.table, alias) +
      " AS k FROM _weir_query_scratch AS _weir_s CROSS JOIN " +
      this.source(node.table) +
      " AS " +
      alias +
      " WHERE ";
    this.params.push(among);
    text +=
      "_weir_s.kind = ? AND _weir_s.tbl = " +
      literal(node.table.name) +
      " AND " +
      keyMatch(node.table, "_weir_s.pk", alias);
    into.push(text + " AND " + workTerm(node, alias) + this.holds(node, ancestors, links, through));
    for (let i = 0; i < node.related.length; i++) {
      const below = ancestors.slice(0);
      below.push(node);
      const belowLinks = links.slice(0);
      belowLinks.push(node.related[i].correlation);
      this.heldAmong(node.related[i].node, below, belowLinks, among, through, into);
    }
  }

  /** Whether the row at the node's alias is held: it passes, and so does its parent, up to the root. */
  private holds(
    node: QueryNode,
    ancestors: Array<QueryNode>,
    links: Array<Correlation>,
    through: string,
  ): string {
    const alias = node.alias();
    let text = this.condition(node.where, alias);
    if (ancestors.length == 0) {
      text += " AND " + this.startCondition(node, alias);
      return text + " AND " + keyBound(node.table, through, this.params, true);
    }
    const c = links[links.length - 1];
    if (node.limit.length > 0) {
      // Among its parent's first rows: those its table's rows correlated alike hold, in its order.
      const first = "_weir_f" + node.index.toString();
      const partition = columnList(c.child, first);
      const own = columnList(c.child, alias);
      let rows =
        "SELECT " +
        columnList(keyTokens(node), first) +
        " FROM " +
        this.source(node.table) +
        " AS " +
        first +
        " WHERE " +
        workTerm(node, first);
      rows +=
        (c.child.length == 1 ? partition + " = " + own : "(" + partition + ") = (" + own + ")") + " AND ";
      rows += this.condition(node.where, first);
      rows += " ORDER BY " + ordering(node, first) + " LIMIT " + limitValue(node);
      text += " AND " + keyIn(node.table, alias, rows);
    }
    const parent = ancestors[ancestors.length - 1];
    const parentAlias = parent.alias();
    text +=
      " AND EXISTS (SELECT 1 FROM " +
      this.source(parent.table) +
      " AS " +
      parentAlias +
      " WHERE " +
      workTerm(parent, parentAlias) +
      correlated(c, parentAlias, alias) +
      " AND ";
    return text + this.holds(parent, ancestors.slice(0, -1), links.slice(0, -1), through) + ")";
  }
}

/** The node's key columns as plan tokens ("#<name>"). */
function keyTokens(node: QueryNode): Array<string> {
  const tokens: string[] = [];
  for (let i = 0; i < node.table.primaryKey.length; i++) tokens.push("#" + node.table.primaryKey[i].name);
  return tokens;
}
