// Upstream ingest: a namespace kept as a replica of an upstream source. The host fetches batches
// and snapshot pages, checks and reduces them (one final upsert or delete per row); the engine
// writes them in the host's transaction, together with the upstream cursor, and commits one
// version. A snapshot generation fills staging tables page by page, catches them up with the
// changes since its first page, and only then swaps them in, so clients never see a half-built
// table. Every step's progress is stored with its rows, so a process killed anywhere resumes.
import { UPSTREAM_ALREADY_APPLIED, UPSTREAM_APPLIED } from "../src/abi";
import { fail } from "./errors";
import { exec, queryRows } from "./host";
import { createTableSql, createTriggersSql, dropTriggersSql, Schema, Table } from "./schema";
import { commitVersion, raiseFloorToWatermark } from "./state";
import { extraParam, ident, jsonString, literal, params, parseI64 } from "./text";

const UPSTREAM_SQL: Array<string> = [
  // The upstream cursor (the watermark every applied batch reached), the fencing token of the
  // newest ingester, the number of the last snapshot generation, and the progress of the one
  // being built (JSON), all in one row so that a batch and its cursor commit together.
  "CREATE TABLE IF NOT EXISTS _weir_upstream (id INTEGER PRIMARY KEY CHECK (id = 1), cursor INTEGER, " +
    "fence INTEGER NOT NULL, generation INTEGER NOT NULL, snapshot TEXT)",
  "INSERT OR IGNORE INTO _weir_upstream (id, cursor, fence, generation, snapshot) VALUES (1, NULL, 0, 0, NULL)",
];

const STAGE_PREFIX = "_weir_stage_";
const PAGING = "paging";
const CATCHING_UP = "catching_up";

function stageName(table: Table): string {
  return ident(STAGE_PREFIX + table.name);
}

function ensureState(): void {
  for (let i = 0; i < UPSTREAM_SQL.length; i++) exec(UPSTREAM_SQL[i]);
}

/** "" when `fence` may write, else a failure: a newer ingester claimed the namespace. */
function checkFence(fence: i64): string {
  const stored = parseI64(queryRows("SELECT fence FROM _weir_upstream WHERE id = 1")[0][0]);
  if (fence < stored) {
    return fail(
      "conflict",
      "another ingester claimed this namespace (fencing token " +
        stored.toString() +
        " > " +
        fence.toString() +
        ")",
    );
  }
  return "";
}

/** The state as JSON: {cursor, fence, generation, snapshot}; the cursor as a decimal string. */
export function upstreamState(): string {
  ensureState();
  return queryRows(
    "SELECT json_object('cursor', CAST(cursor AS TEXT), 'fence', fence, 'generation', generation, " +
      "'snapshot', json(snapshot)) FROM _weir_upstream WHERE id = 1",
  )[0][0];
}

/** Takes a new fencing token: every ingester that took an older one can no longer write. */
export function claimFence(): i64 {
  ensureState();
  exec("UPDATE _weir_upstream SET fence = fence + 1 WHERE id = 1");
  return parseI64(queryRows("SELECT fence FROM _weir_upstream WHERE id = 1")[0][0]);
}

/**
 * Writes one table's reduced changes into `target` (the table or its staging copy): a delete of
 * every row when `truncate`, then the deletes (keys, as arrays in primary-key order, in the
 * caller's extra parameter `deletes`) and upserts (rows, as arrays in column order, in extra
 * parameter `upserts`). Bytes arrive as hex. Answers how many rows changed.
 */
function writeTable(table: Table, target: string, truncate: bool, deletes: i32, upserts: i32): i64 {
  let changed: i64 = 0;
  if (truncate) changed += exec("DELETE FROM " + target);
  if (deletes >= 0) {
    const keys: string[] = [];
    const picks: string[] = [];
    for (let i = 0; i < table.primaryKey.length; i++) {
      keys.push(ident(table.primaryKey[i].name));
      picks.push("value ->> " + i.toString());
    }
    changed += exec(
      "DELETE FROM " +
        target +
        " WHERE (" +
        keys.join(", ") +
        ") IN (SELECT " +
        picks.join(", ") +
        " FROM json_each(?))",
      "[" + extraParam(deletes) + "]",
    );
  }
  if (upserts >= 0) {
    const names: string[] = [];
    const values: string[] = [];
    const sets: string[] = [];
    for (let i = 0; i < table.columns.length; i++) {
      const column = table.columns[i];
      const name = ident(column.name);
      const value = "value ->> " + i.toString();
      names.push(name);
      values.push(column.type == "bytes" ? "unhex(" + value + ")" : value);
      if (!isKey(table, column.name)) sets.push(name + " = excluded." + name);
    }
    const keys: string[] = [];
    for (let i = 0; i < table.primaryKey.length; i++) keys.push(ident(table.primaryKey[i].name));
    // WHERE true: without it SQLite would read ON CONFLICT as part of the SELECT's join.
    changed += exec(
      "INSERT INTO " +
        target +
        " (" +
        names.join(", ") +
        ") SELECT " +
        values.join(", ") +
        " FROM json_each(?) WHERE true ON CONFLICT (" +
        keys.join(", ") +
        ") " +
        (sets.length == 0 ? "DO NOTHING" : "DO UPDATE SET " + sets.join(", ")),
      "[" + extraParam(upserts) + "]",
    );
  }
  return changed;
}

function isKey(table: Table, name: string): bool {
  for (let i = 0; i < table.primaryKey.length; i++) if (table.primaryKey[i].name == name) return true;
  return false;
}

/**
 * Applies a reduced batch. `plan` has a line per table written: "<table index>\t<truncate 0|1>\t
 * <deletes param or -1>\t<upserts param or -1>". Into the tables, the cursor moves to `watermark`
 * and what changed commits as one version; into the snapshot being built (its catch-up), the
 * staging tables change and the catch-up watermark moves. A batch at or below the cursor changes
 * nothing. Answers "<status>\t<rows changed>\t<cursor>\t<committed 0|1>".
 */
export function applyUpstream(
  schema: Schema,
  plan: string,
  watermark: string,
  fence: i64,
  intoSnapshot: bool,
): string {
  ensureState();
  const fenced = checkFence(fence);
  if (fenced.length > 0) return fenced;
  exec("UPDATE _weir_upstream SET fence = ? WHERE id = 1", params([fence.toString()]));
  const reached = intoSnapshot ? "CAST(json_extract(snapshot, '$.catchupWatermark') AS INTEGER)" : "cursor";
  if (
    intoSnapshot &&
    queryRows("SELECT json_extract(snapshot, '$.state') FROM _weir_upstream")[0][0] != CATCHING_UP
  ) {
    return fail("conflict", "no snapshot generation is catching up");
  }
  const current = queryRows(
    "SELECT CAST(" + reached + " AS TEXT), " + reached + " >= CAST(? AS INTEGER) FROM _weir_upstream",
    params([jsonString(watermark)]),
  );
  if (current[0][1] == "1") return UPSTREAM_ALREADY_APPLIED + "\t0\t" + current[0][0] + "\t0";
  let changed: i64 = 0;
  if (plan.length > 0) {
    const lines = plan.split("\n");
    for (let i = 0; i < lines.length; i++) {
      const fields = lines[i].split("\t");
      const table = schema.tables[I32.parseInt(fields[0])];
      const target = intoSnapshot ? stageName(table) : ident(table.name);
      changed += writeTable(
        table,
        target,
        fields[1] == "1",
        I32.parseInt(fields[2]),
        I32.parseInt(fields[3]),
      );
    }
  }
  if (intoSnapshot) {
    exec(
      "UPDATE _weir_upstream SET snapshot = json_set(snapshot, '$.catchupWatermark', ?) WHERE id = 1",
      params([jsonString(watermark)]),
    );
    return UPSTREAM_APPLIED + "\t" + changed.toString() + "\t" + watermark + "\t0";
  }
  exec("UPDATE _weir_upstream SET cursor = CAST(? AS INTEGER) WHERE id = 1", params([jsonString(watermark)]));
  // Only the app's rows make a version; a batch of unmodelled tables just moves the cursor.
  const pending = queryRows("SELECT tbl <> '' FROM _weir_changes ORDER BY seq DESC LIMIT 1")[0][0] == "1";
  if (pending) commitVersion();
  return UPSTREAM_APPLIED + "\t" + changed.toString() + "\t" + watermark + "\t" + (pending ? "1" : "0");
}

/** The snapshot progress as it is stored. */
function progress(
  generation: i64,
  start: string,
  table: string,
  cursor: string,
  state: string,
  catchup: string,
): string {
  return (
    "json_object('generation', " +
    generation.toString() +
    ", 'startWatermark', " +
    literal(start) +
    ", 'table', " +
    (table.length == 0 ? "NULL" : literal(table)) +
    ", 'cursor', " +
    cursor +
    ", 'state', " +
    literal(state) +
    ", 'catchupWatermark', " +
    literal(catchup) +
    ")"
  );
}

/**
 * Starts a snapshot generation at the upstream's snapshot `watermark` (the first page's): empty
 * staging tables, paging from the first table. Replaces a generation in progress.
 */
export function beginSnapshot(schema: Schema, watermark: string, fence: i64): string {
  ensureState();
  const fenced = checkFence(fence);
  if (fenced.length > 0) return fenced;
  if (schema.tables.length == 0) return fail("bad_request", "a snapshot needs a modelled table");
  for (let i = 0; i < schema.tables.length; i++) {
    const table = schema.tables[i];
    exec("DROP TABLE IF EXISTS " + stageName(table));
    exec(createTableSql(table, stageName(table)));
  }
  const generation = parseI64(queryRows("SELECT generation + 1 FROM _weir_upstream WHERE id = 1")[0][0]);
  exec(
    "UPDATE _weir_upstream SET fence = ?, generation = ?, snapshot = " +
      progress(generation, watermark, schema.tables[0].name, "NULL", PAGING, watermark) +
      " WHERE id = 1",
    params([fence.toString(), generation.toString()]),
  );
  return upstreamState();
}

/**
 * Writes a page of `table`'s rows (the caller's extra parameter 0, arrays in column order) into
 * its staging table, with the cursor of the next page; after a table's last page, paging moves
 * to the next table, and after the last table, the generation catches up from its start.
 */
export function applySnapshotPage(
  schema: Schema,
  tableName: string,
  nextCursor: string,
  last: bool,
  fence: i64,
): string {
  ensureState();
  const fenced = checkFence(fence);
  if (fenced.length > 0) return fenced;
  const state = queryRows(
    "SELECT json_extract(snapshot, '$.state'), json_extract(snapshot, '$.table'), generation, " +
      "json_extract(snapshot, '$.startWatermark') FROM _weir_upstream WHERE id = 1",
  )[0];
  if (state[0] != PAGING || state[1] != tableName) {
    return fail("conflict", "the snapshot generation is not paging table " + tableName);
  }
  let index = -1;
  for (let i = 0; i < schema.tables.length; i++) if (schema.tables[i].name == tableName) index = i;
  const table = schema.tables[index];
  const changed = writeTable(table, stageName(table), false, -1, 0);
  const generation = parseI64(state[2]);
  const start = state[3];
  let next: string;
  if (!last) next = progress(generation, start, tableName, "?", PAGING, start);
  else if (index + 1 < schema.tables.length)
    next = progress(generation, start, schema.tables[index + 1].name, "NULL", PAGING, start);
  else next = progress(generation, start, "", "NULL", CATCHING_UP, start);
  exec(
    "UPDATE _weir_upstream SET snapshot = " + next + " WHERE id = 1",
    last ? "[]" : params([jsonString(nextCursor)]),
  );
  return changed.toString();
}

/**
 * Swaps the caught-up staging tables in for the tables as one new version: the tables are
 * replaced whole (their change capture installed again), the cursor becomes the catch-up's
 * watermark, and every client resets once on its next pull.
 */
export function finalizeSnapshot(schema: Schema, fence: i64): string {
  ensureState();
  const fenced = checkFence(fence);
  if (fenced.length > 0) return fenced;
  const state = queryRows(
    "SELECT json_extract(snapshot, '$.state'), json_extract(snapshot, '$.catchupWatermark') FROM _weir_upstream WHERE id = 1",
  )[0];
  if (state[0] != CATCHING_UP) return fail("conflict", "no snapshot generation is catching up");
  for (let i = 0; i < schema.tables.length; i++) {
    const table = schema.tables[i];
    const triggers = dropTriggersSql(table);
    for (let t = 0; t < triggers.length; t++) exec(triggers[t]);
    exec("DROP TABLE " + ident(table.name));
    exec("ALTER TABLE " + stageName(table) + " RENAME TO " + ident(table.name));
    const capture = createTriggersSql(table);
    for (let t = 0; t < capture.length; t++) exec(capture[t]);
  }
  exec(
    "UPDATE _weir_upstream SET cursor = CAST(? AS INTEGER), snapshot = NULL WHERE id = 1",
    params([jsonString(state[1])]),
  );
  raiseFloorToWatermark();
  return state[1];
}
