// Change keys: the change log indexed by the values of the columns visibility filters narrow by
// (`owner = ?`), so that a pull reads the changes its caller may see, not every change since its
// cookie. A column is keyed when a pull first filters by it. The keys are written by pulls, not
// by writes: a pull first notes the keys of the changes logged since the column's keys were last
// brought up to date (each change is noted once, whoever pulls), then reads its own. A write
// costs what it did without keys.
import { exec, queryRows } from "./host";
import { keyMatch } from "./projection";
import { PRIOR_SEQ, priorTableName, Schema, Table } from "./schema";
import { firstSeq } from "./state";
import { extraParam, ident, jsonString, literal, params, parseI64, unionAll } from "./text";
import { Filter, Visibility } from "./visibility";

export const CHANGE_KEYS_SQL: Array<string> = [
  // The keyed columns: the version after which every change of their table has its keys
  // (`since`, when the column was keyed) and the version through which they are noted.
  "CREATE TABLE IF NOT EXISTS _weir_keyed (id INTEGER PRIMARY KEY, tbl TEXT NOT NULL, col TEXT NOT NULL, " +
    "since INTEGER NOT NULL, through INTEGER NOT NULL, UNIQUE (tbl, col))",
  // A change's keys: a value a keyed column had before or after the change, under its log seq.
  "CREATE TABLE IF NOT EXISTS _weir_change_keys (key_id INTEGER NOT NULL, val NOT NULL, seq INTEGER NOT NULL, " +
    "PRIMARY KEY (key_id, val, seq)) WITHOUT ROWID",
  // The keys by seq, so that retention deletes the pruned changes' keys without reading the rest.
  "CREATE INDEX IF NOT EXISTS _weir_change_keys_seq ON _weir_change_keys (seq)",
];

/** The newest version logged: a pending change's, or the watermark when none is pending. */
const NEWEST_VERSION = "(SELECT version FROM _weir_changes ORDER BY seq DESC LIMIT 1)";

/** An earlier engine noted keys as changes were written, and kept no `through`: they are noted up to now. */
export function upgradeKeyed(): void {
  const column = queryRows("SELECT 1 FROM pragma_table_info('_weir_keyed') WHERE name = 'through'");
  if (column.length > 0) return;
  exec("ALTER TABLE _weir_keyed ADD COLUMN through INTEGER NOT NULL DEFAULT 0");
  exec("UPDATE _weir_keyed SET through = " + NEWEST_VERSION);
}

/** Forgets the table's keyed columns and their keys (a migration: every client resets). */
export function dropKeys(tableName: string): void {
  const name = params([jsonString(tableName)]);
  exec("DELETE FROM _weir_change_keys WHERE key_id IN (SELECT id FROM _weir_keyed WHERE tbl = ?)", name);
  exec("DELETE FROM _weir_keyed WHERE tbl = ?", name);
}

/**
 * Deletes the keys of the changes retention deleted (seqs `bound` ("<" or "<=") `upTo`), found by
 * seq: the cost is the keys deleted, not all of them.
 */
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
 * Notes the keys of a keyed column for the changes of versions (through, watermark]: the
 * column's value before each change (its prior value) and after it (the prior value of the
 * row's next change, absent when that change found no row, or the live row after its last).
 * Only when no change is pending, so that the live rows are the last changes' after images.
 *
 * One statement, set-based and in bulk: the log is read in seq order with each change's prior
 * value beside it (the prior table is keyed by seq too), a row's next change and its prior value
 * come from a window over those states (not a lookup per change, which would read the prior
 * table in the window's order, all over it), only a row's last change reads the live row, and
 * the keys go in in the order of the keys' primary key, so that a long backlog (a column keyed
 * on a long log) fills its pages in order.
 */
function noteKeys(table: Table, id: i64, column: string, through: i64, watermark: i64): void {
  const col = ident(column);
  const states =
    "SELECT c.seq AS seq, c.pk AS pk, c.existed AS existed, p." +
    col +
    " AS val FROM _weir_changes AS c LEFT JOIN " +
    priorTableName(table) +
    " AS p ON p." +
    PRIOR_SEQ +
    " = c.seq WHERE c.seq >= ? AND c.seq < ? AND c.tbl = " +
    literal(table.name);
  const windowed =
    "SELECT seq, pk, existed, val, lead(seq) OVER w AS next, lead(existed) OVER w AS next_existed, " +
    "lead(val) OVER w AS next_val FROM (" +
    states +
    ") WINDOW w AS (PARTITION BY pk ORDER BY seq)";
  const images =
    "SELECT seq, CASE WHEN existed = 1 THEN val END AS before_val, CASE WHEN next IS NULL THEN (SELECT r." +
    col +
    " FROM " +
    ident(table.name) +
    " AS r WHERE " +
    keyMatch(table, "a.pk", "r") +
    ") WHEN next_existed = 1 THEN next_val END AS after_val FROM (" +
    windowed +
    ") AS a";
  const keys =
    "SELECT seq, CASE WHEN side = 0 THEN before_val ELSE after_val END AS val FROM (" +
    images +
    ") CROSS JOIN (SELECT 0 AS side UNION ALL SELECT 1)";
  const from = firstSeq(through + 1).toString();
  const to = firstSeq(watermark + 1).toString();
  exec(
    "INSERT OR IGNORE INTO _weir_change_keys (key_id, val, seq) SELECT " +
      id.toString() +
      ", val, seq FROM (" +
      keys +
      ") WHERE val IS NOT NULL ORDER BY val, seq",
    params([from, to]),
  );
}

/**
 * For each table of the schema (in order), how its changes are read by keys, or null when they
 * are read whole: its filter is not narrowed by keys, or changes are pending (a pull inside a
 * writing transaction). A key column not yet keyed is keyed now, complete after the newest
 * version; the keys of the versions since a column's were last noted are noted first.
 */
export function keyReads(schema: Schema, visibility: Visibility, watermark: i64): Array<KeyRead | null> {
  const reads = new Array<KeyRead | null>(schema.tables.length);
  let pending = -1;
  for (let i = 0; i < schema.tables.length; i++) {
    const table = schema.tables[i];
    const filter = visibility.filterFor(table.name);
    reads[i] = null;
    if (filter.keys.length == 0) continue;
    if (pending < 0) pending = parseI64(queryRows("SELECT " + NEWEST_VERSION)[0][0]) > watermark ? 1 : 0;
    if (pending == 1) continue;
    const read = new KeyRead();
    for (let k = 0; k < filter.keys.length; k++) {
      const column = filter.keys[k].column;
      const name = params([jsonString(table.name), jsonString(column)]);
      let found = queryRows("SELECT id, since, through FROM _weir_keyed WHERE tbl = ? AND col = ?", name);
      if (found.length == 0) {
        exec(
          "INSERT INTO _weir_keyed (tbl, col, since, through) VALUES (?, ?, " +
            watermark.toString() +
            ", " +
            watermark.toString() +
            ")",
          name,
        );
        found = queryRows("SELECT id, since, through FROM _weir_keyed WHERE tbl = ? AND col = ?", name);
      }
      const id = parseI64(found[0][0]);
      const through = parseI64(found[0][2]);
      if (through < watermark) {
        noteKeys(table, id, column, through, watermark);
        exec(
          "UPDATE _weir_keyed SET through = ? WHERE id = ?",
          params([watermark.toString(), id.toString()]),
        );
      }
      read.ids.push(id);
      read.since = max<i64>(read.since, parseI64(found[0][1]));
    }
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
  return seqsByKeys(read, filter, from.toString(), to.toString(), bound);
}

function seqsByKeys(read: KeyRead, filter: Filter, from: string, to: string, bound: Array<string>): string {
  const parts: string[] = [];
  for (let k = 0; k < read.ids.length; k++) {
    parts.push(
      "SELECT seq FROM _weir_change_keys WHERE key_id = " +
        read.ids[k].toString() +
        " AND val = ? AND seq >= ? AND seq < ?",
    );
    bound.push(extraParam(filter.keys[k].param));
    bound.push(from);
    bound.push(to);
  }
  return parts.join(" UNION ");
}

/** Whether a pull from `cookie` reads the table through its keys. */
export function readsByKeys(read: KeyRead | null, cookie: i64): bool {
  return read != null && cookie >= read.since;
}

/**
 * The changes a pull from `cookie` reads, table by table (query/pull.ts): those a table's keys
 * hold for the caller where it reads them so (`readsByKeys`), every change of the range
 * otherwise; `reads` are the schema's `tables`' (keyReads), and the ranges read start after
 * `cookie`. Without reads, every change of a range is read.
 */
export class ChangeScope {
  private tables: Map<string, i32> = new Map<string, i32>();
  private keyedNames: Array<string> = [] as string[];

  constructor(
    public visibility: Visibility,
    public reads: Array<KeyRead | null> = [],
    tables: Array<Table> = [],
    cookie: i64 = 0,
  ) {
    for (let i = 0; i < reads.length; i++) {
      if (!readsByKeys(reads[i], cookie)) continue;
      this.tables.set(tables[i].name, i);
      this.keyedNames.push(tables[i].name);
    }
  }

  /** Whether some table is read through its keys. */
  keyed(): bool {
    return this.keyedNames.length > 0;
  }

  /**
   * A condition on the log's rows at `alias`: the changes of `table` with seqs in [from, to)
   * that are read. Adds its parameters to `bound`, in the order its `?` appear.
   */
  of(table: Table, alias: string, from: string, to: string, bound: Array<string>): string {
    const tbl = alias + ".tbl = " + literal(table.name);
    if (!this.tables.has(table.name)) {
      bound.push(from);
      bound.push(to);
      return alias + ".seq >= ? AND " + alias + ".seq < ? AND " + tbl;
    }
    const read = this.reads[this.tables.get(table.name)]!;
    const filter = this.visibility.filterFor(table.name);
    return alias + ".seq IN (" + seqsByKeys(read, filter, from, to, bound) + ") AND " + tbl;
  }

  /**
   * The log's rows read with seqs in [from, to), every table's, as a subquery of columns seq,
   * tbl and pk. Adds its parameters to `bound`.
   */
  rows(from: string, to: string, bound: Array<string>): string {
    const whole =
      "SELECT seq, tbl, pk FROM _weir_changes AS c WHERE c.seq >= ? AND c.seq < ? AND c.tbl <> ''";
    const parts: string[] = [];
    if (!this.keyed()) {
      bound.push(from);
      bound.push(to);
      parts.push(whole);
    } else {
      const names: string[] = [];
      for (let i = 0; i < this.keyedNames.length; i++) names.push(literal(this.keyedNames[i]));
      if (this.keyedNames.length < this.reads.length) {
        bound.push(from);
        bound.push(to);
        parts.push(whole + " AND c.tbl NOT IN (" + names.join(", ") + ")");
      }
      for (let i = 0; i < this.keyedNames.length; i++) {
        const name = this.keyedNames[i];
        const read = this.reads[this.tables.get(name)]!;
        parts.push(
          "SELECT seq, tbl, pk FROM _weir_changes AS c WHERE c.seq IN (" +
            seqsByKeys(read, this.visibility.filterFor(name), from, to, bound) +
            ") AND c.tbl = " +
            literal(name),
        );
      }
    }
    return "(" + unionAll(parts) + ")";
  }

  /** Tells apart the statements scopes build (their key ids and keyed tables; values are bound). */
  signature(): string {
    let text = "";
    for (let i = 0; i < this.keyedNames.length; i++) {
      const read = this.reads[this.tables.get(this.keyedNames[i])]!;
      text += this.keyedNames[i] + ":" + read.ids.join(",") + ";";
    }
    return text;
  }
}
