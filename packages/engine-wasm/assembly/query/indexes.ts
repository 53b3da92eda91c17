// Indexes a query's plan needs, derived from the plan and created at install from the plans of
// the config's named queries the host passes (indexNamedQueries), else when a query of its shape
// is first put (kept in the file from then on). Without them a correlated probe scans its whole
// table for every row of its parent: an EXISTS over 20,000 parents and 40,000 children that
// matches nothing costs 800 million row visits, and a related subquery's window sorts its table.
//
// - an EXISTS subquery: its correlated columns, then the columns its own conditions compare for
//   equality (ANDed at its top level), so a probe reads only rows that can match, then those
//   they compare otherwise (a range, LIKE, GLOB, IN), so a probe tests them on the index alone;
// - a related subquery: its correlated columns, then its order when it has a limit (the window
//   reads each parent's rows in order);
// - the root, when it has a limit: the columns its conditions compare for equality, then its order;
// - in a plan read in ranges (root-sql.ts, `rangedPlan`), a related subquery's parent: the columns
//   the relation correlates on when they are not its key (a many-to-one relation), which a
//   write's upkeep looks its held parents up by (subtree-upkeep.ts).
// A related subquery's and the root's equality columns come before the order too, so one index
// serves a window of equal values.
// An index whose columns lead the table's primary key (every table is WITHOUT ROWID, clustered
// by its key), or lead an index already on the table (the app's own), is not needed: an index
// costs every write. App-declared indexes stay as they are; these are named
// `_weir_qx:<table>(<columns>)`, `-` after a descending column, and their SQL ends with a comment
// naming the query that asked for it first, `/* query "<name>" */` (its name as JSON, `/`
// escaped, so the comment holds no `*/`), which `weir inspect` shows.
import { COLUMN_SEPARATOR, DERIVED_INDEX_PREFIX, PLAN_COLUMN, ROW_SEPARATOR } from "../../src/abi";
import { exec, queryRows } from "../host";
import { Schema, Table } from "../schema";
import { extraParam, ident, jsonString, params } from "../text";
import {
  CONDITION_AND,
  CONDITION_COMPARE,
  CONDITION_EXISTS,
  Condition,
  Correlation,
  onParentKey,
  QueryNode,
  readPlan,
} from "./plan";
import { rangedPlan } from "./root-sql";

/**
 * Creates the indexes the named queries' plans need (at install, before any is put): each line of
 * `text` is "<name>\t<plan>", the indexes of the extra parameters holding them.
 */
export function indexNamedQueries(schema: Schema, text: string): void {
  if (text.length == 0) return;
  const lines = text.split(ROW_SEPARATOR);
  const done = new Set<string>();
  for (let i = 0; i < lines.length; i++) {
    const fields = lines[i].split(COLUMN_SEPARATOR);
    const query = queryRows(
      "SELECT ?, ?",
      params([extraParam(I32.parseInt(fields[0], 10)), extraParam(I32.parseInt(fields[1], 10))]),
    );
    ensureIndexes(readPlan(query[0][1], schema), done, query[0][0]);
  }
}

/**
 * Creates the indexes `root` needs that are not in the file yet, noting `query` (its name) as the
 * one that asked; `done` names those made in this call.
 */
export function ensureIndexes(root: QueryNode, done: Set<string>, query: string): void {
  const wanted: Wanted[] = [];
  collect(root, true, wanted, rangedPlan(root));
  for (let i = 0; i < wanted.length; i++) {
    const index = wanted[i];
    if (done.has(index.name)) continue;
    done.add(index.name);
    if (served(index)) continue;
    exec(
      "CREATE INDEX IF NOT EXISTS " +
        ident(index.name) +
        " ON " +
        ident(index.table.name) +
        " (" +
        index.sql +
        ") /* query " +
        jsonString(query).replaceAll("/", "\\/") +
        " */",
    );
  }
}

/** An index a plan wants: its name, its table, its columns as SQL and as "name[-]" keys. */
class Wanted {
  constructor(
    public name: string,
    public table: Table,
    public sql: string,
    public keys: Array<string>,
  ) {}
}

/** Whether an index on the table (the app's, or one derived already) starts with the wanted columns. */
function served(index: Wanted): bool {
  const rows = queryRows(
    "SELECT l.name, x.name, x.desc FROM pragma_index_list(?) AS l, pragma_index_xinfo(l.name) AS x " +
      "WHERE x.key = 1 ORDER BY l.name, x.seqno",
    params([jsonString(index.table.name)]),
  );
  let current = "";
  let at = 0;
  for (let i = 0; i < rows.length; i++) {
    if (rows[i][0] != current) {
      current = rows[i][0];
      at = 0;
    }
    if (at < 0) continue;
    const key = rows[i][1] + (rows[i][2] == "1" ? "-" : "");
    if (at < index.keys.length && key == index.keys[at]) {
      at++;
      if (at == index.keys.length) return true;
    } else at = -1;
  }
  return false;
}

/** `upkept`: the plan is kept up to date after writes from the rows below its changed rows up. */
function collect(node: QueryNode, root: bool, out: Array<Wanted>, upkept: bool = false): void {
  if (root && node.limit.length > 0) {
    const columns: string[] = [];
    const descending: bool[] = [];
    equalities(node.where, columns, descending);
    for (let j = 0; j < node.orderColumns.length; j++) {
      if (columns.includes(node.orderColumns[j])) continue;
      columns.push(node.orderColumns[j]);
      descending.push(node.orderDescending[j]);
    }
    add(node.table, columns, descending, out);
  }
  for (let i = 0; i < node.related.length; i++) {
    const related = node.related[i];
    const columns = related.correlation.child.slice(0);
    const descending: bool[] = [];
    for (let j = 0; j < columns.length; j++) descending.push(false);
    const child = related.node;
    if (child.limit.length > 0) {
      equalities(child.where, columns, descending);
      for (let j = 0; j < child.orderColumns.length; j++) {
        if (columns.includes(child.orderColumns[j])) continue;
        columns.push(child.orderColumns[j]);
        descending.push(child.orderDescending[j]);
      }
    }
    add(child.table, columns, descending, out);
    if (upkept && !onParentKey(related.correlation, node.table)) {
      const parentColumns = related.correlation.parent.slice(0);
      const ascending: bool[] = [];
      for (let j = 0; j < parentColumns.length; j++) ascending.push(false);
      add(node.table, parentColumns, ascending, out);
    }
    collect(child, false, out, upkept);
  }
  conditions(node.where, out);
}

function conditions(condition: Condition | null, out: Array<Wanted>): void {
  if (condition == null) return;
  if (condition.kind == CONDITION_EXISTS) {
    exists(condition.correlation, condition.subquery!, out);
    return;
  }
  for (let i = 0; i < condition.children.length; i++) conditions(condition.children[i], out);
}

function exists(correlation: Correlation, node: QueryNode, out: Array<Wanted>): void {
  const columns = correlation.child.slice(0);
  const descending: bool[] = [];
  for (let j = 0; j < columns.length; j++) descending.push(false);
  equalities(node.where, columns, descending);
  compared(node.where, columns, descending);
  add(node.table, columns, descending, out);
  collect(node, false, out);
}

/**
 * The columns a node's other top-level conditions compare with a value (a range, LIKE, GLOB,
 * IN), after its equalities: a probe tests them on the index's entries instead of reading each
 * entry's row from the table (every table is clustered by its key, so that read is a second
 * b-tree search per entry), and a range or a prefix narrows the entries read.
 */
function compared(where: Condition | null, columns: Array<string>, descending: Array<bool>): void {
  if (where == null) return;
  if (where.kind == CONDITION_COMPARE) comparedColumn(where, columns, descending);
  else if (where.kind == CONDITION_AND) {
    for (let i = 0; i < where.children.length; i++) {
      if (where.children[i].kind == CONDITION_COMPARE) comparedColumn(where.children[i], columns, descending);
    }
  }
}

function comparedColumn(condition: Condition, columns: Array<string>, descending: Array<bool>): void {
  if (!condition.left.startsWith(PLAN_COLUMN) || condition.right.startsWith(PLAN_COLUMN)) return;
  if (columns.includes(condition.left)) return;
  columns.push(condition.left);
  descending.push(false);
}

/** The columns a node's top-level conditions compare for equality with a value: they narrow a read. */
function equalities(where: Condition | null, columns: Array<string>, descending: Array<bool>): void {
  if (where == null) return;
  if (where.kind == CONDITION_COMPARE) equality(where, columns, descending);
  else if (where.kind == CONDITION_AND) {
    for (let i = 0; i < where.children.length; i++) {
      if (where.children[i].kind == CONDITION_COMPARE) equality(where.children[i], columns, descending);
    }
  }
}

function equality(condition: Condition, columns: Array<string>, descending: Array<bool>): void {
  if (condition.op != "=" && condition.op != "IS") return;
  if (!condition.left.startsWith(PLAN_COLUMN) || condition.right.startsWith(PLAN_COLUMN)) return;
  if (columns.includes(condition.left)) return;
  columns.push(condition.left);
  descending.push(false);
}

function add(table: Table, columns: Array<string>, descending: Array<bool>, out: Array<Wanted>): void {
  // An index of a WITHOUT ROWID table ends with the primary key, ascending, anyway: a plan's
  // ordering is completed by it.
  while (columns.length > 1 && !descending[columns.length - 1] && isKey(table, columns[columns.length - 1])) {
    columns.pop();
    descending.pop();
  }
  if (columns.length == 0 || keyLeads(table, columns, descending)) return;
  const parts: string[] = [];
  const named: string[] = [];
  for (let i = 0; i < columns.length; i++) {
    const name = columns[i].substring(PLAN_COLUMN.length);
    parts.push(ident(name) + (descending[i] ? " DESC" : ""));
    named.push(name + (descending[i] ? "-" : ""));
  }
  const name = DERIVED_INDEX_PREFIX + table.name + "(" + named.join(",") + ")";
  out.push(new Wanted(name, table, parts.join(", "), named));
}

function isKey(table: Table, column: string): bool {
  const name = column.substring(PLAN_COLUMN.length);
  for (let i = 0; i < table.primaryKey.length; i++) if (table.primaryKey[i].name == name) return true;
  return false;
}

/** The columns are the primary key's first ones, ascending: the table's own order serves them. */
function keyLeads(table: Table, columns: Array<string>, descending: Array<bool>): bool {
  const key = table.primaryKey;
  for (let i = 0; i < columns.length; i++) {
    if (i >= key.length) return true;
    if (descending[i] || columns[i].substring(PLAN_COLUMN.length) != key[i].name) return false;
  }
  return true;
}
