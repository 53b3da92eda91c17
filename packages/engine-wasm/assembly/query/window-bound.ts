// The bound of a window read in pages of its order (ranges.ts): a root with a limit larger than
// a range reads, and no relation or EXISTS, holds the first `limit` rows of its table that pass
// its conditions, in its order (which ends with the key, so no two rows tie). Read a page at a
// time, it holds every such row up to its bound, the order's values of the last row its pages
// read, and the next page reads the rows after it. A write between pages reaches the rows up to
// the bound alone, as they are now: those it moved past the bound are let go of, and read again
// when their page comes. Once read, the window keeps its bound (at its last row), or keeps that it
// holds every row that passes (fewer than its limit), and writes bring it up to date from there
// (window-upkeep.ts); a whole evaluation of it keeps one too. Its rows changed any other way
// (let go of, lent, the writes' changed rows alone let go of) forget it: writes then evaluate it
// whole, which keeps one again.
//
// The bound's values are kept in a table as SQLite holds them (a column without a type keeps any
// value as it is): a JSON text would round a REAL and lose a BLOB. Each is read back by a scalar
// subquery, which SQLite evaluates once a statement.
import { exec, queryRows } from "../host";
import { ident, params } from "../text";
import { QueryNode } from "./plan";

export function windowBoundsSql(): string {
  return (
    "CREATE TABLE IF NOT EXISTS _weir_query_bounds (group_id TEXT NOT NULL, hash TEXT NOT NULL, " +
    "i INTEGER NOT NULL, value, PRIMARY KEY (group_id, hash, i)) WITHOUT ROWID"
  );
}

/** The bound of the group's query `hash` (both JSON parameters), as SQL terms on the rows at `alias`. */
export class WindowBound {
  constructor(
    public group: string,
    public hash: string,
  ) {}

  /** The bound's `i`-th value (its parameters pushed to `bound`). */
  private value(i: i32, bound: Array<string>): string {
    bound.push(this.group);
    bound.push(this.hash);
    return (
      "(SELECT value FROM _weir_query_bounds WHERE group_id = ? AND hash = ? AND i = " + i.toString() + ")"
    );
  }

  /**
   * That the row comes after the bound in the node's order (SQLite's, and Zero's: NULL before any
   * value, after every value descending). Where the order's first column holds no NULL, a range on
   * it comes first, so an index in the order is read from the bound on, not from its first row.
   */
  after(node: QueryNode, alias: string, bound: Array<string>): string {
    const lead = this.lead(node, alias, bound, false);
    return "(" + lead + this.beyond(node, alias, bound) + ")";
  }

  /**
   * That the row comes at or before the bound in the node's order; `lead`: a range first, as
   * `after` (not where other terms find the rows: the changed ones, a few keys).
   */
  through(node: QueryNode, alias: string, bound: Array<string>, lead: bool = true): string {
    if (!lead) return "(coalesce(" + this.beyond(node, alias, bound) + ", 0) = 0)";
    const range = this.lead(node, alias, bound, true);
    return "(" + range + "coalesce(" + this.beyond(node, alias, bound) + ", 0) = 0)";
  }

  /**
   * Where the rows after the bound (or, `through`, up to it) lie in an index in the order: a range
   * on its first column. Its NULLs sort first ascending and last descending, so with NULLs in it
   * the range depends on whether the bound's first value is NULL, and in two cases the rows lie
   * in two ranges: after a value, descending, come the smaller values, then the NULLs; up to a
   * value, ascending, the NULLs, then the smaller values. `part` then says which (PART_VALUES,
   * PART_NULLS; PART_ALL: no range).
   */
  private lead(node: QueryNode, alias: string, bound: Array<string>, through: bool): string {
    const name = node.orderColumns[0].substring(1);
    const column = alias + "." + ident(name);
    const descending = node.orderDescending[0];
    if (!node.table.column(name)!.nullable) {
      const up = descending == through;
      return column + (up ? " >= " : " <= ") + this.value(0, bound) + " AND ";
    }
    if (this.part == PART_NULLS) return column + " IS NULL AND ";
    const none = this.firstNull();
    if (!through) {
      if (!descending && !none) return column + " >= " + this.value(0, bound) + " AND ";
      if (descending && none) return column + " IS NULL AND ";
      if (descending && this.part == PART_VALUES) return column + " <= " + this.value(0, bound) + " AND ";
    } else {
      if (!descending && none) return column + " IS NULL AND ";
      if (descending && !none) return column + " >= " + this.value(0, bound) + " AND ";
      if (!descending && this.part == PART_VALUES) return column + " <= " + this.value(0, bound) + " AND ";
    }
    return "";
  }

  /** Which of the rows after the bound a page reads (see `lead`). */
  part: i32 = PART_ALL;

  /** Whether the bound's first value is NULL. */
  firstNull(): bool {
    const found = queryRows(
      "SELECT value IS NULL FROM _weir_query_bounds WHERE group_id = ? AND hash = ? AND i = 0",
      params([this.group, this.hash]),
    );
    return found.length > 0 && found[0][0] == "1";
  }

  /**
   * Whether the rows after the bound (`through`: up to it) lie in two ranges of an index in the
   * order: its first column holds NULLs, the bound's first value is not NULL, and the NULLs lie
   * on the rows' side of it (last descending, first ascending).
   */
  split(node: QueryNode, through: bool = false): bool {
    const name = node.orderColumns[0].substring(1);
    return node.orderDescending[0] != through && node.table.column(name)!.nullable && !this.firstNull();
  }

  /** That the row comes after the bound: NULL only where it is false. */
  private beyond(node: QueryNode, alias: string, bound: Array<string>): string {
    const columns = node.orderColumns;
    const alternatives: string[] = [];
    for (let i = 0; i < columns.length; i++) {
      const name = columns[i].substring(1);
      const column = alias + "." + ident(name);
      const descending = node.orderDescending[i];
      const terms: string[] = [];
      for (let j = 0; j < i; j++)
        terms.push(alias + "." + ident(columns[j].substring(1)) + " IS " + this.value(j, bound));
      const value = this.value(i, bound);
      if (!node.table.column(name)!.nullable) terms.push(column + (descending ? " < " : " > ") + value);
      else if (!descending) {
        const again = this.value(i, bound);
        terms.push(
          "((" + value + " IS NULL AND " + column + " IS NOT NULL) OR " + column + " > " + again + ")",
        );
      } else {
        const again = this.value(i, bound);
        terms.push(
          "(" + value + " IS NOT NULL AND (" + column + " < " + again + " OR " + column + " IS NULL))",
        );
      }
      alternatives.push("(" + terms.join(" AND ") + ")");
    }
    return "(" + alternatives.join(" OR ") + ")";
  }

  /**
   * Moves the bound to the order's values of `end`, a SELECT of the row it moves to (its columns
   * aliased v0, v1, ...; `endParams` its parameters), when there is one: answers whether there was.
   */
  moveTo(node: QueryNode, end: string, endParams: Array<string>): bool {
    const values: string[] = [];
    for (let i = 0; i < node.orderColumns.length; i++) {
      values.push("SELECT " + i.toString() + " AS i, v" + i.toString() + " AS value FROM _weir_end");
    }
    const bound: string[] = [];
    for (let i = 0; i < endParams.length; i++) bound.push(endParams[i]);
    bound.push(this.group);
    bound.push(this.hash);
    exec(
      "DELETE FROM _weir_query_bounds WHERE group_id = ? AND hash = ? AND i < 0",
      params([this.group, this.hash]),
    );
    return (
      exec(
        "WITH _weir_end AS MATERIALIZED (" +
          end +
          ") INSERT INTO _weir_query_bounds (group_id, hash, i, value) SELECT ?, ?, i, value FROM (" +
          values.join(" UNION ALL ") +
          ") WHERE 1 ON CONFLICT DO UPDATE SET value = excluded.value",
        params(bound),
      ) > 0
    );
  }

  /** What the bound says of the window's rows: KEPT_NONE, KEPT_ALL or KEPT_BOUND. */
  kept(): i32 {
    const found = queryRows(
      "SELECT min(i) FROM _weir_query_bounds WHERE group_id = ? AND hash = ?",
      params([this.group, this.hash]),
    );
    const least = found[0][0];
    return least.length == 0 ? KEPT_NONE : least == "-1" ? KEPT_ALL : KEPT_BOUND;
  }

  /** The window holds every row that passes its conditions, fewer than its limit: no bound. */
  keepAll(): void {
    this.forget();
    exec(
      "INSERT INTO _weir_query_bounds (group_id, hash, i, value) VALUES (?, ?, -1, NULL)",
      params([this.group, this.hash]),
    );
  }

  /** Nothing is known of the window's rows (they are evaluated whole when writes reach them). */
  forget(): void {
    exec("DELETE FROM _weir_query_bounds WHERE group_id = ? AND hash = ?", params([this.group, this.hash]));
  }
}

/** A page reads every row after the bound. */
export const PART_ALL: i32 = 0;
/** A page reads the rows after the bound whose first order value is not NULL (see `lead`). */
export const PART_VALUES: i32 = 1;
/** A page reads the rows after the bound whose first order value is NULL. */
export const PART_NULLS: i32 = 2;

/** No bound is kept: the window's rows are evaluated whole when writes reach them. */
export const KEPT_NONE: i32 = 0;
/** The window holds every row that passes, fewer than its limit. */
export const KEPT_ALL: i32 = 1;
/** The window holds every row that passes up to its bound. */
const KEPT_BOUND: i32 = 2;

/** The order's values of the node's row at `alias`, as v0, v1, ... */
export function orderValues(node: QueryNode, alias: string): string {
  const columns: string[] = [];
  for (let i = 0; i < node.orderColumns.length; i++) {
    columns.push(alias + "." + ident(node.orderColumns[i].substring(1)) + " AS v" + i.toString());
  }
  return columns.join(", ");
}
