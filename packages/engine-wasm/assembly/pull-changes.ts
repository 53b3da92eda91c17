// An incremental pull: the rows changed after the cookie, as the caller may see them now.
import { COLUMN_SEPARATOR, ROW_SEPARATOR, ROWS_HERE } from "../src/abi";
import { KeyRead, keyedSeqs, keyReads, readsByKeys } from "./change-keys";
import { queryPayload, queryRows, queryStatement, Statement } from "./host";
import { delOp, keyMatch, putOp } from "./projection";
import { PullPlan } from "./pull-plan";
import { PRIOR_SEQ, priorTableName, Schema, Table } from "./schema";
import { CHANGES_PER_VERSION, firstSeq } from "./state";
import { ident, jsonString, params, parseI64 } from "./text";
import { Filter, Visibility } from "./visibility";

// For each row changed after the cookie: its first version after the cookie (which orders the
// answer and decides where caps cut it), and the operation that brings the client up to date.
// The live row, if visible, is put. Otherwise the row is deleted if the client may hold it: not
// only as it was at the cookie, since an earlier answer cut by a cap may have sent a later
// state, so if any state the row had since the cookie was visible. Those states are the prior
// values of the row's first change in each version since the cookie (intermediate states inside
// a transaction were never committed, so no client saw them), so keys of rows the client could
// never see are not sent either.
//
// A table whose filter keys narrow (`owner = ?`) is read through its change keys: only the
// changes whose images hold one of the caller's keys. That leaves out no row the caller may see
// or hold: each state of a row it let through holds a key, and is the new image of a change (or
// the old image of the next, when a change moved the key). Nor does it change a row's answer:
// a row's first change in a version that is read through keys while an earlier one of that
// version is not has a prior state (the earlier change's new image) without the caller's keys,
// which the filter rejects as it rejects the skipped change's prior state.
export function changesSql(
  schema: Schema,
  visibility: Visibility,
  reads: Array<KeyRead | null>,
  format: i32,
  cookie: i64,
  watermark: i64,
  bound: Array<string>,
): string {
  const from = firstSeq(cookie + 1);
  const to = firstSeq(watermark + 1);
  const parts: string[] = [];
  for (let i = 0; i < schema.tables.length; i++) {
    const table = schema.tables[i];
    const filter: Filter = visibility.filterFor(table.name);
    const live =
      "(SELECT " +
      putOp(table, format) +
      " FROM " +
      ident(table.name) +
      " WHERE " +
      keyMatch(table, "_weir_pk") +
      " AND " +
      filter.condition() +
      ")";
    filter.addParams(bound);
    const range = "seq >= ? AND seq < ? AND tbl = ?";
    const rangeParams = [from.toString(), to.toString(), jsonString(table.name)];
    let seen: string;
    if (filter.isAll()) {
      // Every state was visible: the client may hold the row if it existed at any of them.
      seen =
        "SELECT pk AS _weir_pk, min(version) AS _weir_first, max(existed) AS _weir_seen " +
        "FROM _weir_changes WHERE " +
        range +
        " GROUP BY pk";
      for (let p = 0; p < rangeParams.length; p++) bound.push(rangeParams[p]);
    } else {
      // Parameters bind in the order their `?` appear: the filter, then the changes read.
      filter.addParams(bound);
      let changes: string;
      if (readsByKeys(reads[i], cookie)) {
        changes = "seq IN (" + keyedSeqs(reads[i]!, filter, from, to, bound) + ")";
      } else {
        changes = range;
        for (let p = 0; p < rangeParams.length; p++) bound.push(rangeParams[p]);
      }
      seen = seenSql(table, filter, changes);
    }
    parts.push(
      "SELECT _weir_first, coalesce(" +
        live +
        ", CASE WHEN _weir_seen THEN " +
        delOp(table, format, "_weir_pk") +
        " END) AS patch FROM (" +
        seen +
        ")",
    );
  }
  return (
    "SELECT _weir_first, octet_length(patch), patch FROM (" +
    parts.join(" UNION ALL ") +
    ") WHERE patch IS NOT NULL ORDER BY _weir_first"
  );
}

/**
 * Per row of the `changes` (a condition on the log), its first version and whether the filter
 * let through any of its states before a version's first change. The prior table is aliased as
 * the app's table, so the filter reads its columns by name and with their types; the
 * subquery's other columns are named _weir_*, which no app column can be.
 */
function seenSql(table: Table, filter: Filter, changes: string): string {
  const name = ident(table.name);
  const firsts =
    "SELECT pk, version, min(seq) AS s FROM _weir_changes WHERE " + changes + " GROUP BY pk, version";
  const states =
    "SELECT c.pk AS _weir_pk, c.version AS _weir_version, " +
    name +
    "." +
    PRIOR_SEQ +
    " IS NOT NULL AS _weir_existed, " +
    priorColumns(table) +
    " FROM (" +
    firsts +
    ") AS c LEFT JOIN " +
    priorTableName(table) +
    " AS " +
    name +
    " ON " +
    name +
    "." +
    PRIOR_SEQ +
    " = c.s";
  return (
    "SELECT _weir_pk, min(_weir_version) AS _weir_first, max(_weir_existed AND " +
    filter.condition() +
    ") AS _weir_seen FROM (" +
    states +
    ") AS " +
    name +
    " GROUP BY _weir_pk"
  );
}

/** The prior table's columns, qualified by the app table's name it is aliased as. */
function priorColumns(table: Table): string {
  const parts: string[] = [];
  for (let i = 0; i < table.columns.length; i++) {
    const name = ident(table.columns[i].name);
    parts.push(ident(table.name) + "." + name + " AS " + name);
  }
  return parts.join(", ");
}

// A pull far behind reads only the versions that can fill its row cap, not every change since
// its cookie: they end with the version of the (maxRows + 1)-th change logged after the cookie
// (a version is read whole), or, when every table is read through keys, the (maxRows + 1)-th
// change read. Distinct rows are at most the changes read, so the cap can still cut inside
// them; when it does not, the answer ends at that version, as if a cap had cut it there, and
// the client pulls again. A row's states after that version are judged by the pull that reads
// them: each such state is the prior value of a later change (or the live row).
const WINDOW_END = new Statement(
  "SELECT version FROM _weir_changes WHERE seq >= ? AND seq < ? AND tbl <> '' ORDER BY seq LIMIT 1 OFFSET ?",
);

/** Caps beyond this read every change since the cookie (an OFFSET that large finds nothing). */
const WINDOWED_ROWS: i64 = 1_000_000_000;

function windowEnd(
  schema: Schema,
  visibility: Visibility,
  reads: Array<KeyRead | null>,
  cookie: i64,
  watermark: i64,
  maxRows: i64,
): i64 {
  if (maxRows >= WINDOWED_ROWS) return watermark;
  const from = firstSeq(cookie + 1);
  const to = firstSeq(watermark + 1);
  let keyed = schema.tables.length > 0;
  for (let i = 0; keyed && i < reads.length; i++) keyed = readsByKeys(reads[i], cookie);
  if (!keyed) {
    const found = queryStatement(WINDOW_END, params([from.toString(), to.toString(), maxRows.toString()]));
    return found.length == 0 ? watermark : parseI64(found);
  }
  const bound: string[] = [];
  const parts: string[] = [];
  for (let i = 0; i < schema.tables.length; i++) {
    parts.push(keyedSeqs(reads[i]!, visibility.filterFor(schema.tables[i].name), from, to, bound));
  }
  bound.push(maxRows.toString());
  const found = queryRows(
    "SELECT seq FROM (" + parts.join(" UNION ") + ") ORDER BY seq LIMIT 1 OFFSET ?",
    params(bound),
  );
  return found.length == 0 ? watermark : parseI64(found[0][0]) / CHANGES_PER_VERSION;
}

// Caps cut the answer only between versions: the changes of one version (one transaction)
// arrive together, and the first version is always included so that a pull always progresses.
// A version is included only if all of it fits, so each is measured whole before it is taken.
export function planChanges(
  schema: Schema,
  visibility: Visibility,
  format: i32,
  cookie: i64,
  watermark: i64,
  maxRows: i64,
  maxBytes: i64,
  plan: PullPlan,
): void {
  const reads = keyReads(schema, visibility, watermark);
  const bound: string[] = [];
  const end = windowEnd(schema, visibility, reads, cookie, watermark, maxRows);
  const sql = changesSql(schema, visibility, reads, format, cookie, end, bound);
  const text = schema.tables.length == 0 ? "" : queryPayload(sql, params(bound));
  plan.cookie = end;
  let rows: i64 = 0;
  let bytes: i64 = 0;
  let position = 0;
  while (position < text.length) {
    // The next version: its rows are consecutive (the answer is ordered by version).
    const version = parseI64(text.substring(position, text.indexOf(COLUMN_SEPARATOR, position)));
    let versionRows: i64 = 0;
    let versionBytes: i64 = 0;
    let next = position;
    while (next < text.length) {
      let lineEnd = text.indexOf(ROW_SEPARATOR, next);
      if (lineEnd < 0) lineEnd = text.length;
      const tab = text.indexOf(COLUMN_SEPARATOR, next);
      if (parseI64(text.substring(next, tab)) != version) break;
      versionRows++;
      versionBytes += parseI64(text.substring(tab + 1, lineEnd));
      next = lineEnd + 1;
    }
    if (rows > 0 && (rows + versionRows > maxRows || bytes + versionBytes > maxBytes)) {
      plan.cookie = version - 1;
      break;
    }
    rows += versionRows;
    bytes += versionBytes;
    position = next;
  }
  plan.included = rows;
  plan.patch = ROWS_HERE;
}
