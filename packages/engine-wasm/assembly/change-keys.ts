// Change keys: the change log indexed by the values of the columns visibility filters narrow by
// (`owner = ?`), so that a pull reads the changes its caller may see, not every change since its
// cookie. A column is keyed when a pull first filters by it: from then on its table's change
// capture notes, for each change, the column's values in the row's images (assembly/schema.ts),
// and the keys are complete for the versions after the one it was keyed at.
import { exec, queryRows } from "./host";
import { createTriggersSql, dropTriggersSql, KeyedColumn, Schema, Table } from "./schema";
import { extraParam, jsonString, params, parseI64 } from "./text";
import { Filter, Visibility } from "./visibility";

export const CHANGE_KEYS_SQL: Array<string> = [
  // The keyed columns, and the version after which every change of their table has its keys.
  "CREATE TABLE IF NOT EXISTS _weir_keyed (id INTEGER PRIMARY KEY, tbl TEXT NOT NULL, col TEXT NOT NULL, " +
    "since INTEGER NOT NULL, UNIQUE (tbl, col))",
  // A change's keys: a value a keyed column had before or after the change, under its log seq.
  "CREATE TABLE IF NOT EXISTS _weir_change_keys (key_id INTEGER NOT NULL, val NOT NULL, seq INTEGER NOT NULL, " +
    "PRIMARY KEY (key_id, val, seq)) WITHOUT ROWID",
];

/** The table's keyed columns, for its change capture. */
export function keyedColumns(table: Table): Array<KeyedColumn> {
  const rows = queryRows(
    "SELECT id, col FROM _weir_keyed WHERE tbl = ? ORDER BY id",
    params([jsonString(table.name)]),
  );
  const keyed: KeyedColumn[] = [];
  for (let i = 0; i < rows.length; i++) {
    // A column the table no longer has keys nothing (a migration drops its keys).
    if (table.column(rows[i][1]) != null) keyed.push(new KeyedColumn(parseI64(rows[i][0]), rows[i][1]));
  }
  return keyed;
}

/** Installs the table's change capture, with its keyed columns. */
export function captureChanges(table: Table): void {
  const drops = dropTriggersSql(table);
  for (let i = 0; i < drops.length; i++) exec(drops[i]);
  const creates = createTriggersSql(table, keyedColumns(table));
  for (let i = 0; i < creates.length; i++) exec(creates[i]);
}

/** Forgets the table's keyed columns and their keys (a migration: every client resets). */
export function dropKeys(tableName: string): void {
  const name = params([jsonString(tableName)]);
  exec("DELETE FROM _weir_change_keys WHERE key_id IN (SELECT id FROM _weir_keyed WHERE tbl = ?)", name);
  exec("DELETE FROM _weir_keyed WHERE tbl = ?", name);
}

/** Deletes the keys of the changes retention deleted (seqs `bound` ("<" or "<=") `upTo`). */
export function pruneKeys(bound: string, upTo: string): void {
  exec("DELETE FROM _weir_change_keys WHERE seq " + bound + " ?", params([upTo]));
}

/** How a pull reads a table's changes through its keys: the key id of each of its filter's keys. */
export class KeyRead {
  ids: Array<i64> = [] as i64[];
  /** The version after which the keys are complete. */
  since: i64 = 0;
}

/**
 * For each table of the schema (in order), how its changes are read by keys, or null when they
 * are read whole: its filter is not narrowed by keys. A key column not yet keyed is keyed now;
 * its keys are complete after the newest version logged (its pending changes, if any, are not
 * noted), so pulls from older cookies read the table whole.
 */
export function keyReads(schema: Schema, visibility: Visibility): Array<KeyRead | null> {
  const reads = new Array<KeyRead | null>(schema.tables.length);
  for (let i = 0; i < schema.tables.length; i++) {
    const table = schema.tables[i];
    const filter = visibility.filterFor(table.name);
    if (filter.keys.length == 0) {
      reads[i] = null;
      continue;
    }
    const read = new KeyRead();
    let added = false;
    for (let k = 0; k < filter.keys.length; k++) {
      const column = filter.keys[k].column;
      const name = params([jsonString(table.name), jsonString(column)]);
      let found = queryRows("SELECT id, since FROM _weir_keyed WHERE tbl = ? AND col = ?", name);
      if (found.length == 0) {
        exec(
          "INSERT INTO _weir_keyed (tbl, col, since) VALUES (?, ?, " +
            "(SELECT version FROM _weir_changes ORDER BY seq DESC LIMIT 1))",
          name,
        );
        found = queryRows("SELECT id, since FROM _weir_keyed WHERE tbl = ? AND col = ?", name);
        added = true;
      }
      read.ids.push(parseI64(found[0][0]));
      read.since = max<i64>(read.since, parseI64(found[0][1]));
    }
    if (added) captureChanges(table);
    reads[i] = read;
  }
  return reads;
}

/**
 * The seqs of the changes in [from, to) whose keys match the filter's values: every change of a
 * row that any state since `from` of it let through the filter is among them, as is the change
 * before it in its version (see pull-changes.ts). Adds the parameters.
 */
export function keyedSeqs(read: KeyRead, filter: Filter, from: i64, to: i64, bound: Array<string>): string {
  const parts: string[] = [];
  for (let k = 0; k < read.ids.length; k++) {
    parts.push(
      "SELECT seq FROM _weir_change_keys WHERE key_id = " +
        read.ids[k].toString() +
        " AND val = ? AND seq >= ? AND seq < ?",
    );
    bound.push(extraParam(filter.keys[k].param));
    bound.push(from.toString());
    bound.push(to.toString());
  }
  return parts.join(" UNION ");
}

/** Whether a pull from `cookie` reads the table through its keys. */
export function readsByKeys(read: KeyRead | null, cookie: i64): bool {
  return read != null && cookie >= read.since;
}
