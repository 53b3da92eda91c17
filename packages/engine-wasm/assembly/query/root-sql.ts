// The SQL of a root-only plan (no related subquery or EXISTS) read otherwise than whole: among its
// table's changed rows (a plan whose rows are each held by their own values, or a window up to its
// bound), in ranges of its table's key (ranges.ts), or in pages of a window's order
// (window-bound.ts). Its conditions and visibility are QuerySql's.
import { ChangeScope } from "../change-keys";
import { keyBound } from "../keyset-window";
import { ident, literal } from "../text";
import { workTerm } from "./limits";
import { onParentKey, QueryNode } from "./plan";
import { hasExists, QuerySql } from "./sql";
import { keyArray, ordering } from "./sql-terms";
import { orderValues, WindowBound } from "./window-bound";

export class RootSql extends QuerySql {
  /**
   * The rows of a root-only plan among the rows of its table changed in [from, to) (sequence
   * numbers) that `scope` reads, "<table>\t<key>": see `changedRowsPlan`; `through`: only those
   * up to that key, where a query read in ranges holds the rows of its ranges so far (ranges.ts).
   */
  changedRows(
    node: QueryNode,
    from: i64,
    to: i64,
    scope: ChangeScope,
    through: string = "",
    bound: WindowBound | null = null,
  ): string {
    const alias = node.alias();
    const extracted: string[] = [];
    const joined: string[] = [];
    for (let i = 0; i < node.table.primaryKey.length; i++) {
      const column = "_weir_k" + i.toString();
      extracted.push("json_extract(_weir_c.pk, '$[" + i.toString() + "]') AS " + column);
      joined.push(alias + "." + ident(node.table.primaryKey[i].name) + " = _weir_ck." + column);
    }
    // The changed keys are read first (CROSS JOIN keeps SQLite to that order), each row then
    // found by its key: an index on the condition's columns (a window's) would otherwise have
    // SQLite read every row that passes and test each against the changes.
    // Parameters bind in the order their `?` appear: the changes read, the source's, the bound's,
    // the condition's.
    const read = scope.of(node.table, "_weir_c", from.toString(), to.toString(), this.params);
    let sql =
      "SELECT " +
      literal(node.table.name) +
      " AS t, " +
      keyArray(node.table, alias) +
      " AS k FROM (SELECT DISTINCT " +
      extracted.join(", ") +
      " FROM _weir_changes AS _weir_c WHERE " +
      read +
      ") AS _weir_ck CROSS JOIN " +
      this.source(node.table) +
      " AS " +
      alias +
      " WHERE " +
      joined.join(" AND ") +
      " AND ";
    // The changed keys find the rows: a range on the bound would have SQLite read the window instead.
    if (bound != null) sql += bound.through(node, alias, this.params, false) + " AND ";
    else if (through.length > 0) sql += keyBound(node.table, through, this.params, true) + " AND ";
    return sql + this.rootConditions(node, alias);
  }

  /**
   * The rows that pass a window's conditions after its `bound` (null: from its first), in its
   * order (window-bound.ts), "<table>\t<key>"; `reverse`: those up to its bound (null: all), the
   * last first. The caller ends it with a LIMIT.
   */
  windowRows(node: QueryNode, bound: WindowBound | null, reverse: bool = false): string {
    const alias = node.alias();
    return this.rootRows(node, alias) + workTerm(node, alias) + this.windowTail(node, alias, bound, reverse);
  }

  /** The order's values (v0, v1, ...) of the `offset`-th of those rows. */
  windowEnd(node: QueryNode, bound: WindowBound | null, offset: i32, reverse: bool = false): string {
    const alias = node.alias();
    return (
      "SELECT " +
      orderValues(node, alias) +
      " FROM " +
      this.source(node.table) +
      " AS " +
      alias +
      " WHERE " +
      this.windowTail(node, alias, bound, reverse) +
      " LIMIT 1 OFFSET " +
      offset.toString()
    );
  }

  private windowTail(node: QueryNode, alias: string, bound: WindowBound | null, reverse: bool): string {
    // Parameters bind in the order their `?` appear: the bound's, the condition's.
    let term = "";
    if (bound != null)
      term =
        (reverse ? bound.through(node, alias, this.params) : bound.after(node, alias, this.params)) + " AND ";
    return term + this.rootConditions(node, alias) + " ORDER BY " + ordering(node, alias, reverse);
  }

  /**
   * The rows a root-only plan holds among those of its table with keys after `after` and up to
   * `through` (JSON arrays; "": from the first, to the last), "<table>\t<key>": see ranges.ts.
   */
  rangeRows(node: QueryNode, after: string, through: string): string {
    const alias = node.alias();
    // Parameters bind in the order their `?` appear: the source's, the bounds', the condition's.
    let sql = this.rootRows(node, alias) + workTerm(node, alias);
    sql += keyBound(node.table, after, this.params) + " AND ";
    sql += keyBound(node.table, through, this.params, true) + " AND ";
    return sql + this.rootConditions(node, alias);
  }

  /** "SELECT <table> AS t, <key> AS k FROM <source> AS <alias> WHERE ": a root's rows, as held. */
  private rootRows(node: QueryNode, alias: string): string {
    return (
      "SELECT " +
      literal(node.table.name) +
      " AS t, " +
      keyArray(node.table, alias) +
      " AS k FROM " +
      this.source(node.table) +
      " AS " +
      alias +
      " WHERE "
    );
  }

  /** The root's condition and start, which every row it holds passes. */
  private rootConditions(node: QueryNode, alias: string): string {
    const condition = this.condition(node.where, alias);
    return condition + " AND " + this.startCondition(node, alias);
  }
}

/**
 * Whether a plan's rows can be found among the changed rows alone: a root without related
 * subqueries, EXISTS conditions or a limit holds a row exactly when the row passes conditions on
 * its own columns (and the visibility filter's, which are too), so a row that did not change
 * since the cookie is held as it was.
 */
export function changedRowsPlan(node: QueryNode): bool {
  return node.related.length == 0 && node.limit.length == 0 && !hasExists(node.where);
}

/**
 * Whether a plan's fresh evaluation can be read in ranges of its root's key (ranges.ts): a root
 * without a limit, and no EXISTS anywhere in the plan, holds the rows of its table that pass its
 * conditions and, below each, the related rows that correlate with it. A range of root rows then
 * holds those rows and their related rows alone (a related row of parents in two ranges is found
 * by both: the later range leaves it out, `rangesShareRows`).
 */
export function rangedPlan(node: QueryNode): bool {
  return node.limit.length == 0 && !existsBelow(node);
}

/**
 * Whether a row that a range of a `rangedPlan` holds through a related subquery may be held
 * through a root row of another range too. Not when each related subquery correlates on its
 * parent's whole key (a row of it then belongs to one parent row, and so to one root row) and no
 * two of the plan's nodes read one table: a one-to-many relation. A many-to-one one (an item's
 * family) may.
 */
export function rangesShareRows(node: QueryNode, tables: Array<string> = []): bool {
  if (tables.includes(node.table.name)) return true;
  tables.push(node.table.name);
  for (let i = 0; i < node.related.length; i++) {
    const related = node.related[i];
    if (!onParentKey(related.correlation, node.table) || rangesShareRows(related.node, tables)) return true;
  }
  return false;
}

/** Whether the node or a node below it has an EXISTS condition (and so holds its witnesses). */
function existsBelow(node: QueryNode): bool {
  if (hasExists(node.where)) return true;
  for (let i = 0; i < node.related.length; i++) if (existsBelow(node.related[i].node)) return true;
  return false;
}

/**
 * Whether a plan is a window read in pages of its order (window-bound.ts): a root without
 * related subqueries or EXISTS conditions whose limit is more than `rows`.
 */
export function pagedWindowPlan(node: QueryNode, rows: i32): bool {
  return (
    node.related.length == 0 &&
    node.limit.length > 0 &&
    I64.parseInt(node.limit, 10) > <i64>rows &&
    !hasExists(node.where)
  );
}
