// A query plan as one parameterized SQLite SELECT. Every table a query reads (its root, related
// and EXISTS subqueries alike) is read through the caller's visibility filter, so a query can
// neither sync nor test rows its caller may not see. Values are bound, never spliced: a plan's
// values are JSON parameters, a filter's are the host's extra parameters.
//
// The statement is a WITH clause of one CTE per node whose rows the query holds: the root, with
// its order, start and limit, and each related subquery, whose rows are those correlated to its
// parent's rows, its limit applied per parent (a window partitioned by the correlated columns:
// parents with equal keys share their children); a node's condition witnesses are one more CTE
// that reads the node's once (`witnessesOf`).
import { PLAN_COLUMN, PLAN_GLOB, PLAN_NOT_GLOB, PLAN_NULL } from "../../src/abi";
import { keyBound, keyIn } from "../keyset-window";
import { Table } from "../schema";
import { ident, literal, unionAll } from "../text";
import { Visibility } from "../visibility";
import { workTerm } from "./limits";
import {
  CONDITION_AND,
  CONDITION_COMPARE,
  CONDITION_EXISTS,
  Condition,
  Correlation,
  QueryNode,
} from "./plan";
import { columnList, correlated, keyArray, limitValue, ordering } from "./sql-terms";

export class QuerySql {
  params: Array<string> = [] as string[];
  private ctes: Array<string> = [] as string[];
  private selects: Array<string> = [] as string[];
  /** The same selects without the root's position, which only an ordered answer needs. */
  private heldSelects: Array<string> = [] as string[];
  /** EXISTS conditions read as true: a condition every row the exact one passes also passes. */
  loose: bool = false;
  /** Held nodes so far: the next one's position among the root and its related subqueries. */
  private heldCount: i32 = 0;
  /**
   * The root's rows were found in pages (pages.ts): the JSON parameters of the query's hash and
   * plan, by which the host answers their keys ("" when they were not: the root is read whole).
   */
  pagedHash: string = "";
  pagedPlan: string = "";
  /**
   * The root's rows are only those with keys after `rootAfter` and up to `rootThrough` (JSON
   * arrays; "": from the first, to the last): a range of a plan read in ranges (ranges.ts).
   */
  rootAfter: string = "";
  rootThrough: string = "";

  constructor(private visibility: Visibility) {}

  /** The table as a source: filtered by the caller's visibility when it has a filter. */
  source(table: Table): string {
    const filter = this.visibility.filterFor(table.name);
    if (filter.isAll()) return ident(table.name);
    filter.addParams(this.params);
    return "(SELECT * FROM " + ident(table.name) + " WHERE " + filter.condition() + ")";
  }

  private operand(token: string, alias: string): string {
    if (token.startsWith(PLAN_COLUMN)) return alias + "." + ident(token.substring(1));
    if (token == PLAN_NULL) return "NULL";
    this.params.push(token.substring(1));
    return "?";
  }

  private compare(condition: Condition, alias: string): string {
    const op = condition.op;
    const left = this.operand(condition.left, alias);
    if (op == "IN")
      return left + " IN (SELECT value FROM json_each(" + this.operand(condition.right, alias) + "))";
    if (op == "NOT IN") {
      // A NULL is in no list and outside none (NOT IN of an empty list would hold for it).
      const again = this.operand(condition.left, alias);
      return (
        "(" +
        left +
        " NOT IN (SELECT value FROM json_each(" +
        this.operand(condition.right, alias) +
        ")) AND " +
        again +
        " IS NOT NULL)"
      );
    }
    const right = this.operand(condition.right, alias);
    if (op == PLAN_GLOB || op == PLAN_NOT_GLOB) return left + " " + op + " " + right;
    if (op == "LIKE" || op == "NOT LIKE") return left + " " + op + " " + right + " ESCAPE '\\'";
    return left + " " + op + " " + right;
  }

  /** Where a node's alias is `alias`: true when there is no condition. */
  condition(condition: Condition | null, alias: string): string {
    if (condition == null) return "1";
    const c = condition;
    if (c.kind == CONDITION_COMPARE) return this.compare(c, alias);
    if (c.kind == CONDITION_EXISTS) return this.loose ? "1" : this.exists(c, alias);
    const parts: string[] = [];
    for (let i = 0; i < c.children.length; i++) parts.push(this.condition(c.children[i], alias));
    if (parts.length == 0) return c.kind == CONDITION_AND ? "1" : "0";
    return "(" + parts.join(c.kind == CONDITION_AND ? " AND " : " OR ") + ")";
  }

  private exists(condition: Condition, parentAlias: string): string {
    const node = condition.subquery!;
    const alias = node.alias();
    let sql =
      (condition.negated ? "NOT EXISTS (SELECT 1 FROM " : "EXISTS (SELECT 1 FROM ") +
      this.source(node.table) +
      " AS " +
      alias +
      " WHERE " +
      workTerm(node, alias) +
      correlated(condition.correlation, parentAlias, alias);
    sql += " AND " + this.condition(node.where, alias) + this.limitClause(node) + ")";
    return sql;
  }

  // A limit is written as an integer, not bound: SQLite plans a bound LIMIT less well.
  limitClause(node: QueryNode): string {
    if (node.limit.length == 0) return "";
    return " LIMIT " + limitValue(node);
  }

  /**
   * The node's rows after its start row, in its order (Zero sorts NULL before any value). Each
   * `?` gets its own parameter, so every term is written where it appears.
   */
  startCondition(node: QueryNode, alias: string): string {
    if (!node.hasStart) return "1";
    const alternatives: string[] = [];
    for (let i = 0; i < node.orderColumns.length; i++) {
      const terms: string[] = [];
      for (let j = 0; j < i; j++) terms.push(this.startEqual(node, alias, j));
      terms.push(this.startAfter(node, alias, i));
      alternatives.push("(" + terms.join(" AND ") + ")");
    }
    if (!node.startExclusive) {
      const terms: string[] = [];
      for (let j = 0; j < node.orderColumns.length; j++) terms.push(this.startEqual(node, alias, j));
      alternatives.push("(" + terms.join(" AND ") + ")");
    }
    return "(" + alternatives.join(" OR ") + ")";
  }

  private startEqual(node: QueryNode, alias: string, i: i32): string {
    const column = alias + "." + ident(node.orderColumns[i].substring(1));
    const value = node.startValues[i];
    return value == PLAN_NULL ? column + " IS NULL" : column + " IS " + this.operand(value, alias);
  }

  private startAfter(node: QueryNode, alias: string, i: i32): string {
    const column = alias + "." + ident(node.orderColumns[i].substring(1));
    const value = node.startValues[i];
    if (value == PLAN_NULL) return node.orderDescending[i] ? "0" : column + " IS NOT NULL";
    if (!node.orderDescending[i]) return column + " > " + this.operand(value, alias);
    return "(" + column + " < " + this.operand(value, alias) + " OR " + column + " IS NULL)";
  }

  /** The CTE of the root node and of every related node below it. */
  held(node: QueryNode, parent: QueryNode | null, correlation: Correlation | null): void {
    const alias = node.alias();
    let body: string;
    if (parent == null) {
      body =
        "SELECT " + projection(node, alias) + " FROM " + this.source(node.table) + " AS " + alias + " WHERE ";
      if (this.pagedHash.length > 0) {
        // The pages tested the condition and the start: the root's rows are those they kept.
        this.params.push(this.pagedHash);
        this.params.push(this.pagedPlan);
        body += keyIn(node.table, alias, keysOf(node.table, "_weir_page_keys(?, ?)"));
      } else {
        // A root without EXISTS is metered by the rows it examines: a scan of a large table may
        // pass the budget too (a root with EXISTS is metered by its probes).
        if (!hasExists(node.where)) body += workTerm(node, alias);
        // Its key range (parameters bind in the order their `?` appear: the source's first).
        body += keyBound(node.table, this.rootAfter, this.params) + " AND ";
        body += keyBound(node.table, this.rootThrough, this.params, true) + " AND ";
        body += this.condition(node.where, alias);
        body += " AND " + this.startCondition(node, alias);
      }
      if (node.limit.length > 0) body += " ORDER BY " + ordering(node, alias) + this.limitClause(node);
    } else {
      const c = correlation!;
      const partition = columnList(c.child, alias);
      const inner =
        "SELECT " +
        projection(node, alias) +
        (node.limit.length > 0
          ? ", row_number() OVER (PARTITION BY " +
            partition +
            " ORDER BY " +
            ordering(node, alias) +
            ") AS _weir_rn"
          : "") +
        " FROM " +
        this.source(node.table) +
        " AS " +
        alias +
        " WHERE " +
        // Metered as a probe is: its rows are those of its parents' correlation, which one
        // condition no index narrows can make every row of its table.
        workTerm(node, alias) +
        (c.child.length == 1 ? partition : "(" + partition + ")") +
        " IN (SELECT " +
        columnList(c.parent, parent.alias()) +
        " FROM " +
        parent.alias() +
        ") AND " +
        this.condition(node.where, alias);
      if (node.limit.length > 0) {
        body = "SELECT * FROM (" + inner + ") WHERE _weir_rn <= " + limitValue(node);
      } else body = inner;
    }
    // MATERIALIZED: a node with related nodes is read by them as well as by the answer, and is
    // evaluated once. A leaf is read by the answer alone, where SQLite does better planning it
    // inline (a related leaf about twice as fast).
    this.ctes.push(alias + (node.related.length > 0 ? " AS MATERIALIZED (" : " AS (") + body + ")");
    const position = parent == null ? "row_number() OVER (ORDER BY " + ordering(node, alias) + ")" : "0";
    const number = (this.heldCount++).toString();
    const rows = literal(node.table.name) + " AS t, " + keyArray(node.table, alias) + " AS k FROM " + alias;
    this.selects.push("SELECT " + number + " AS n, " + position + " AS p, " + rows);
    this.heldSelects.push("SELECT " + number + " AS n, " + rows);
    const witnesses: string[] = [];
    for (let i = 0; i < node.related.length; i++) {
      const related = node.related[i];
      if (related.node.witness) witnesses.push(this.witnessRows(related.node, alias, related.correlation));
      else this.held(related.node, node, related.correlation);
    }
    if (witnesses.length > 0) this.witnessesOf(alias, witnesses);
  }

  /**
   * The JSON array of `node`'s witness rows for the parent row at `parentAlias`: the first rows of
   * its table, in its order and up to its limit, that correlate with the parent's row and pass
   * the condition's subquery, each as {n, t, k} (its node's number, its table, its key as the
   * change log writes it) with the witnesses of its own conditions nested under "c".
   */
  witnessRows(node: QueryNode, parentAlias: string, correlation: Correlation): string {
    const alias = node.alias();
    // Numbered before its own witnesses, as the plan lists them (depth first).
    const number = this.nextHeld().toString();
    // The text reads nested witnesses before the source and the conditions: their parameters too.
    const nested: string[] = [];
    for (let i = 0; i < node.related.length; i++) {
      nested.push(this.witnessRows(node.related[i].node, alias, node.related[i].correlation));
    }
    let text =
      "json((SELECT json_group_array(json_object('n', " +
      number +
      ", 't', " +
      literal(node.table.name) +
      ", 'k', json(" +
      keyArray(node.table, alias) +
      "), 'c', json_array(" +
      nested.join(", ") +
      "))) FROM (SELECT " +
      alias +
      ".* FROM " +
      this.source(node.table) +
      " AS " +
      alias +
      " WHERE " +
      workTerm(node, alias) +
      correlated(correlation, parentAlias, alias) +
      " AND ";
    text += this.condition(node.where, alias);
    text += " ORDER BY " + ordering(node, alias) + this.limitClause(node) + ") AS " + alias + "))";
    return text;
  }

  /** The next held node's number (its position in depth-first order). */
  nextHeld(): i32 {
    return this.heldCount++;
  }

  /**
   * One CTE of every witness below the node at `alias` (`witnessRows`), which reads the node's
   * CTE once: SQLite expands a CTE's body at each place that names it, and past a thousand
   * expansions in all refuses the statement ("nested too deep"), which a CTE per witness would
   * soon reach under a root with many conditions.
   */
  private witnessesOf(alias: string, witnesses: Array<string>): void {
    const name = "_weir_w" + alias.substring(7);
    this.ctes.push(
      name +
        " AS (SELECT DISTINCT json_extract(_weir_j.value, '$.n') AS n, json_extract(_weir_j.value, '$.t') AS t, " +
        "json_extract(_weir_j.value, '$.k') AS k FROM " +
        alias +
        ", json_tree(json_array(" +
        witnesses.join(", ") +
        ")) AS _weir_j WHERE _weir_j.type = 'object')",
    );
    this.selects.push("SELECT n, 0 AS p, t, k FROM " + name);
    this.heldSelects.push("SELECT n, t, k FROM " + name);
  }

  /**
   * The statement answering the rows the query holds, "<node>\t<table>\t<key>": the node is the
   * position among the root (0) and its related subqueries in depth-first order; the root's
   * rows come first, in the query's order.
   */
  statement(): string {
    return (
      "WITH " + this.ctes.join(", ") + " SELECT n, t, k FROM (" + unionAll(this.selects) + ") ORDER BY n, p"
    );
  }

  /** The same rows in no particular order (the root's positions are not computed). */
  heldStatement(): string {
    return "WITH " + this.ctes.join(", ") + " SELECT n, t, k FROM (" + unionAll(this.heldSelects) + ")";
  }
}

export function hasExists(condition: Condition | null): bool {
  if (condition == null) return false;
  if (condition.kind == CONDITION_EXISTS) return true;
  for (let i = 0; i < condition.children.length; i++) if (hasExists(condition.children[i])) return true;
  return false;
}

/** The key's columns from a JSON array of keys (each a JSON array, as `keyArray` writes it). */
function keysOf(table: Table, keys: string): string {
  const columns: string[] = [];
  for (let i = 0; i < table.primaryKey.length; i++)
    columns.push("json_extract(value, '$[" + i.toString() + "]')");
  return "SELECT " + columns.join(", ") + " FROM json_each(" + keys + ")";
}

/**
 * The columns a node's CTE keeps: its key, its order (the root's answer is numbered by it) and
 * the columns its related subqueries correlate on. Its conditions are tested inside the CTE.
 */
function projection(node: QueryNode, alias: string): string {
  const names: string[] = [];
  for (let i = 0; i < node.table.primaryKey.length; i++) names.push(node.table.primaryKey[i].name);
  for (let i = 0; i < node.orderColumns.length; i++) {
    const name = node.orderColumns[i].substring(1);
    if (!names.includes(name)) names.push(name);
  }
  for (let r = 0; r < node.related.length; r++) {
    const parent = node.related[r].correlation.parent;
    for (let i = 0; i < parent.length; i++) {
      const name = parent[i].substring(1);
      if (!names.includes(name)) names.push(name);
    }
  }
  const columns: string[] = [];
  for (let i = 0; i < names.length; i++) columns.push(alias + "." + ident(names[i]));
  return columns.join(", ");
}

/** The SQL of a plan's held rows, and its parameters in order. */
export function querySql(root: QueryNode, visibility: Visibility): QuerySql {
  const sql = new QuerySql(visibility);
  sql.held(root, null, null);
  return sql;
}
