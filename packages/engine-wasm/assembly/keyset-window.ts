// A table read a page at a time, in key order: the keys of the next rows after the last key the
// page before read. Query roots (query/pages.ts) and reset pulls (pull-reset-pages.ts) page so.
import { Table } from "./schema";
import { ident, jsonString } from "./text";

/** The CTE the page's statements read their window of keys from. */
const WINDOW = "_weir_window";

function keyColumns(table: Table, suffix: string): string {
  const keys: string[] = [];
  for (let i = 0; i < table.primaryKey.length; i++) keys.push(ident(table.primaryKey[i].name) + suffix);
  return keys.join(", ");
}

/**
 * The condition that the row's key is past the key `after` (a JSON array; "" from the first
 * row: "1"), or with `through`, at most it. Its parameters are pushed to `bound`.
 */
export function keyBound(table: Table, key: string, bound: Array<string>, through: bool = false): string {
  if (key.length == 0) return "1";
  const bounds: string[] = [];
  for (let i = 0; i < table.primaryKey.length; i++) {
    bound.push(jsonString(key));
    bounds.push("json_extract(?, '$[" + i.toString() + "]')");
  }
  const op = through ? " <= " : " > ";
  return table.primaryKey.length == 1
    ? keyColumns(table, "") + op + bounds[0]
    : "(" + keyColumns(table, "") + ")" + op + "(" + bounds.join(", ") + ")";
}

/**
 * `WITH _weir_window AS (...) `: the keys of the next `size` rows of `table` after the key `after`
 * (a JSON array; "" from the first row), in key order. Its parameters are pushed to `bound`.
 */
export function windowCte(table: Table, after: string, size: i32, bound: Array<string>): string {
  const keyList = keyColumns(table, "");
  return (
    "WITH " +
    WINDOW +
    " AS (SELECT " +
    keyList +
    " FROM " +
    ident(table.name) +
    " WHERE " +
    keyBound(table, after, bound) +
    " ORDER BY " +
    keyList +
    " LIMIT " +
    size.toString() +
    ") "
  );
}

/**
 * The key (a JSON array) of the `size`-th row of `table` after the key `after`, in key order: a
 * page of `size` rows ends there (none: the rows after `after` are fewer, the table ends first).
 */
export function pageEnd(table: Table, after: string, size: i32, bound: Array<string>): string {
  return (
    "SELECT json_array(" +
    keyColumns(table, "") +
    ") FROM " +
    ident(table.name) +
    " WHERE " +
    keyBound(table, after, bound) +
    " ORDER BY " +
    keyColumns(table, "") +
    " LIMIT 1 OFFSET " +
    (size - 1).toString()
  );
}

/**
 * The last key the window read, as a JSON array, or NULL when it read fewer than `size` rows (the
 * table is done): where the next page starts.
 */
export function windowLast(table: Table, size: i32): string {
  return (
    "(SELECT json_array(" +
    keyColumns(table, "") +
    ") FROM " +
    WINDOW +
    " WHERE (SELECT count(*) FROM " +
    WINDOW +
    ") = " +
    size.toString() +
    " ORDER BY " +
    keyColumns(table, " DESC") +
    " LIMIT 1)"
  );
}

/** The window's keys, to test a row's key against (`keyIn`). */
export function windowKeys(table: Table): string {
  return "SELECT " + keyColumns(table, "") + " FROM " + WINDOW;
}

/** Whether the row at `alias` has its key among the rows of `select`, which reads the key's columns. */
export function keyIn(table: Table, alias: string, select: string): string {
  const columns: string[] = [];
  for (let i = 0; i < table.primaryKey.length; i++)
    columns.push(alias + "." + ident(table.primaryKey[i].name));
  return (columns.length == 1 ? columns[0] : "(" + columns.join(", ") + ")") + " IN (" + select + ")";
}
