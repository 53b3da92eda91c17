// Installing a declared schema: the app's tables, the change capture and the bookkeeping.
// Installing the same schema again changes nothing. A schema that only adds tables or nullable
// columns migrates (and every client resets once to receive the new shape); anything else
// would lose or reinterpret data and is refused.
import {
  COLUMN_SEPARATOR,
  ERROR_MARK,
  FALSE,
  INSTALL_CREATED,
  INSTALL_MIGRATED,
  INSTALL_UNCHANGED,
  QUERY_TABLES_PROBE,
  TRUE,
} from "../src/abi";
import { CHANGE_KEYS_SQL, dropKeys, upgradeKeyed } from "./change-keys";
import { fail } from "./errors";
import { noQueryEngine, QUERY_ENGINE } from "./features";
import { exec, queryRows } from "./host";
import { upgradeDeferred } from "./query/deferred";
import { groupRowsTable, queryRowsTable } from "./query/membership";
import { pendingTable } from "./query/pending";
import { createQueryTables } from "./query/tables";
import {
  Column,
  createPriorTableSql,
  createTableSql,
  createTriggersSql,
  dropTriggersSql,
  PRIOR_SEQ,
  parseSchema,
  priorTableName,
  Schema,
  Table,
} from "./schema";
import { BOOKKEEPING_SQL, raiseFloorToWatermark } from "./state";
import { ident, jsonString, params } from "./text";

function execAll(statements: Array<string>): void {
  for (let i = 0; i < statements.length; i++) exec(statements[i]);
}

function installTable(table: Table): void {
  exec(createTableSql(table));
  exec(createPriorTableSql(table));
  execAll(dropTriggersSql(table));
  execAll(createTriggersSql(table));
}

/** Re-creates a table's change capture where an earlier engine wrote it otherwise. */
function refreshTriggers(table: Table): void {
  exec(createPriorTableSql(table));
  const wanted = createTriggersSql(table);
  const stored = queryRows(
    "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = ?",
    params([jsonString(table.name)]),
  );
  let current = stored.length == wanted.length;
  for (let i = 0; current && i < stored.length; i++) current = wanted.includes(stored[i][0]);
  if (current) return;
  execAll(dropTriggersSql(table));
  execAll(wanted);
}

/**
 * Whether the namespace replicates an upstream (an ingester claimed it, or it ingested): its
 * rows come from there, so a column dropped, retyped or made NOT NULL loses nothing a new
 * snapshot does not bring back.
 */
function isReplica(): bool {
  const found = queryRows("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '_weir_upstream'");
  if (found.length == 0) return false;
  return (
    queryRows(
      "SELECT 1 FROM _weir_upstream WHERE id = 1 AND (fence > 0 OR cursor IS NOT NULL OR snapshot IS NOT NULL OR generation > 0)",
    ).length > 0
  );
}

/** Why `next` cannot replace `current` in place, or "" when it can. */
function incompatibility(current: Schema, next: Schema, replica: bool): string {
  for (let i = 0; i < current.tables.length; i++) {
    const was = current.tables[i];
    const now = next.table(was.name);
    if (now == null) return "table " + was.name + " was removed";
    if (now.primaryKey.length != was.primaryKey.length) return "primary key of " + was.name + " changed";
    for (let k = 0; k < was.primaryKey.length; k++) {
      if (now.primaryKey[k].name != was.primaryKey[k].name) return "primary key of " + was.name + " changed";
    }
    // A replica's columns may change any way but its key: the next snapshot refills them.
    if (replica) continue;
    for (let j = 0; j < was.columns.length; j++) {
      const column = was.columns[j];
      const found = now.column(column.name);
      if (found == null)
        return "column " + was.name + "." + column.name + " was removed (only a replica's may be)";
      if (found.type != column.type || found.nullable != column.nullable) {
        return (
          "column " + was.name + "." + column.name + " changed type or nullability (only a replica's may)"
        );
      }
    }
    for (let j = 0; j < now.columns.length; j++) {
      const column = now.columns[j];
      if (was.column(column.name) == null && !column.nullable) {
        return "new column " + was.name + "." + column.name + " must be nullable (but in a replica)";
      }
    }
  }
  return "";
}

function addColumn(table: Table, column: Column, definition: string): void {
  exec("ALTER TABLE " + ident(table.name) + " ADD COLUMN " + definition);
  exec("ALTER TABLE " + priorTableName(table) + " ADD COLUMN " + ident(column.name) + " " + column.sqlType());
}

function dropColumn(table: Table, name: string): void {
  // SQLite refuses to drop an indexed column: such indexes go first.
  const indexes = queryRows(
    "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL",
    params([jsonString(table.name)]),
  );
  for (let i = 0; i < indexes.length; i++) {
    if (indexes[i][1].includes(ident(name))) exec("DROP INDEX " + ident(indexes[i][0]));
  }
  exec("ALTER TABLE " + ident(table.name) + " DROP COLUMN " + ident(name));
  exec("ALTER TABLE " + priorTableName(table) + " DROP COLUMN " + ident(name));
}

/**
 * Moves the tables to `next`. A column that is new or changed is added nullable (a table cannot
 * take a NOT NULL column with no default; only a replica may get one) and holds null until, in a
 * replica, the snapshot that follows: the upstream's cursor is cleared, so the next ingest
 * builds a new generation, whose tables have the declared shape exactly. A column dropped then
 * added again keeps nothing. Answers whether a replica must resnapshot.
 */
function migrate(current: Schema, next: Schema): bool {
  let resnapshot = false;
  for (let i = 0; i < next.tables.length; i++) {
    const table = next.tables[i];
    const was = current.table(table.name);
    if (was != null) {
      // The change capture names every column: it goes first, and comes back below. The change
      // keys go too: the pulls that follow (every client resets) key the columns again.
      execAll(dropTriggersSql(was));
      dropKeys(was.name);
      for (let j = 0; j < was.columns.length; j++) {
        const column = was.columns[j];
        const now = table.column(column.name);
        if (now != null && now.type == column.type && now.nullable == column.nullable) continue;
        dropColumn(was, column.name);
        resnapshot = true;
      }
      for (let j = 0; j < table.columns.length; j++) {
        const column = table.columns[j];
        const before = was.column(column.name);
        if (before != null && before.type == column.type && before.nullable == column.nullable) continue;
        addColumn(
          table,
          column,
          column.nullable ? column.definition() : ident(column.name) + " " + column.sqlType(),
        );
        resnapshot = true;
      }
    } else resnapshot = true;
    installTable(table);
  }
  raiseFloorToWatermark();
  return resnapshot;
}

/** The next ingest of a replica builds a new snapshot generation (a half-built one is dropped). */
function requireResnapshot(next: Schema): void {
  for (let i = 0; i < next.tables.length; i++) {
    exec("DROP TABLE IF EXISTS " + ident("_weir_stage_" + next.tables[i].name));
  }
  exec("UPDATE _weir_upstream SET cursor = NULL, snapshot = NULL WHERE id = 1");
}

/**
 * Engines before 0.2 kept a row's prior values as JSON text in the log's `old` column, which lost
 * the precision of REALs and the type of every value. Such a log cannot be read any more: its
 * column is renamed and every client resets once, so no pull ever reads a change it wrote.
 */
function upgradeLogLayout(): bool {
  const layout = queryRows("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = '_weir_changes'");
  if (layout.length == 0 || !layout[0][0].includes(" old TEXT")) return false;
  exec("ALTER TABLE _weir_changes RENAME COLUMN old TO existed");
  return true;
}

/**
 * An earlier engine named the prior tables' key `seq`, which an app column of that
 * name collided with (its table could not be installed). No app column starts with `_weir`.
 */
function upgradePriorKeys(): void {
  const tables = queryRows(
    "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE '\\_weir\\_prior\\_%' ESCAPE '\\' " +
      "AND sql LIKE '%(seq INTEGER PRIMARY KEY%'",
  );
  for (let i = 0; i < tables.length; i++) {
    exec("ALTER TABLE " + ident(tables[i][0]) + " RENAME COLUMN seq TO " + PRIOR_SEQ);
  }
}

/** An earlier engine kept no group's visibility: such groups lend no rows until a reset. */
function upgradeQueryGroups(): void {
  const column = queryRows("SELECT 1 FROM pragma_table_info('_weir_query_groups') WHERE name = 'visibility'");
  if (column.length == 0) exec("ALTER TABLE _weir_query_groups ADD COLUMN visibility TEXT");
  // Nor where a client that lost a part of a cut answer resumes: such a client resets once.
  const resume = queryRows(
    "SELECT 1 FROM pragma_table_info('_weir_query_groups') WHERE name = 'resume_cookie'",
  );
  if (resume.length == 0) {
    exec("ALTER TABLE _weir_query_groups ADD COLUMN resume_cookie INTEGER");
    exec("ALTER TABLE _weir_query_groups ADD COLUMN resume_since INTEGER");
  }
}

/**
 * An earlier engine kept no visibility per client group: each such group's next pull recomputes
 * its rows once (a reset, or a diff of its queries), as if its claims had changed.
 */
function upgradeClientGroups(): void {
  const column = queryRows(
    "SELECT 1 FROM pragma_table_info('_weir_client_groups') WHERE name = 'visibility'",
  );
  if (column.length == 0) exec("ALTER TABLE _weir_client_groups ADD COLUMN visibility TEXT");
}

/**
 * An earlier engine keyed a group's membership rows by its id. They are rekeyed by the group's
 * key (`_weir_group_keys`), as they stand: no group resets.
 */
function upgradeGroupKeys(): void {
  const column = queryRows("SELECT 1 FROM pragma_table_info('_weir_group_rows') WHERE name = 'group_id'");
  if (column.length == 0) return;
  exec(
    "INSERT INTO _weir_group_keys (group_id) SELECT group_id FROM (SELECT group_id FROM _weir_query_groups UNION " +
      "SELECT group_id FROM _weir_query_rows UNION SELECT group_id FROM _weir_group_rows UNION SELECT group_id " +
      "FROM _weir_query_pending) WHERE true ON CONFLICT DO NOTHING",
  );
  rekey("_weir_query_rows", queryRowsTable(), "hash, tbl, pk");
  rekey("_weir_group_rows", groupRowsTable(), "tbl, pk, refs");
  rekey("_weir_query_pending", pendingTable(), "tbl, pk, client_has");
}

/** Rebuilds `table` by `created` (its new layout), each row's group id replaced by its key. */
function rekey(table: string, created: string, columns: string): void {
  const old = table + "_by_id";
  exec("ALTER TABLE " + table + " RENAME TO " + old);
  exec(created);
  exec(
    "INSERT INTO " +
      table +
      " (group_key, " +
      columns +
      ") SELECT k.group_key, " +
      columns +
      " FROM " +
      old +
      " JOIN _weir_group_keys AS k USING (group_id)",
  );
  exec("DROP TABLE " + old);
}

/**
 * Whether the database holds nothing of weir's yet: a new namespace, whose first install needs
 * none of the probes that find what an earlier engine left (one statement instead of seven).
 */
function isFresh(): bool {
  return (
    queryRows("SELECT 1 FROM sqlite_master WHERE name LIKE '\\_weir\\_%' ESCAPE '\\' LIMIT 1").length == 0
  );
}

/**
 * Installs the schema. Answers what it did and whether the database has the query tables
 * ("<outcome>\t<1|0>"): a new namespace has none until a pull supplies queries (query/tables.ts).
 */
export function install(schemaText: string, engineVersion: string): string {
  const fresh = isFresh();
  const queries = !fresh && queryRows(QUERY_TABLES_PROBE).length > 0;
  // A lean build knows nothing of the query tables, so it leaves a database that has them (its
  // clients pulled by queries) to the full engine rather than serve them half.
  if (!QUERY_ENGINE && queries) return noQueryEngine();
  const outcome = installSchema(schemaText, engineVersion, fresh, queries);
  if (outcome.startsWith(ERROR_MARK)) return outcome;
  return outcome + COLUMN_SEPARATOR + (queries ? TRUE : FALSE);
}

function installSchema(schemaText: string, engineVersion: string, fresh: bool, queries: bool): string {
  // A connection setting, so set on every install: without it the rows REPLACE deletes would
  // not fire the delete trigger, and clients could keep rows they may no longer see.
  exec("PRAGMA recursive_triggers = ON");
  execAll(BOOKKEEPING_SQL);
  // Those an earlier engine created lack the newer ones.
  if (QUERY_ENGINE && queries) createQueryTables();
  execAll(CHANGE_KEYS_SQL);
  let upgraded = false;
  if (!fresh) {
    upgradeKeyed();
    upgraded = upgradeLogLayout();
    upgradePriorKeys();
    if (QUERY_ENGINE && queries) upgradeQueryGroups();
    upgradeClientGroups();
    if (QUERY_ENGINE && queries) upgradeGroupKeys();
    if (QUERY_ENGINE && queries) upgradeDeferred();
  }
  let rows: Array<Array<string>> = [];
  if (!fresh) rows = queryRows("SELECT schema FROM _weir_state WHERE id = 1");
  const next = parseSchema(schemaText);
  if (rows.length == 0) {
    for (let i = 0; i < next.tables.length; i++) installTable(next.tables[i]);
    exec(
      "INSERT INTO _weir_state (id, floor, engine_version, schema) VALUES (1, 0, ?, ?)",
      params([jsonString(engineVersion), jsonString(schemaText)]),
    );
    // The log starts with the marker of version 0, so it always has a newest row.
    exec("INSERT INTO _weir_changes (seq, version, tbl, pk, existed) VALUES (0, 0, '', '[]', NULL)");
    return INSTALL_CREATED;
  }
  const currentText = rows[0][0];
  if (currentText == schemaText) {
    for (let i = 0; i < next.tables.length; i++) refreshTriggers(next.tables[i]);
    if (upgraded) raiseFloorToWatermark();
    exec("UPDATE _weir_state SET engine_version = ? WHERE id = 1", params([jsonString(engineVersion)]));
    return INSTALL_UNCHANGED;
  }
  const current = parseSchema(currentText);
  const replica = isReplica();
  const reason = incompatibility(current, next, replica);
  if (reason.length > 0) return fail("schema_mismatch", "the schema cannot migrate in place: " + reason);
  if (migrate(current, next) && replica) requireResnapshot(next);
  exec(
    "UPDATE _weir_state SET engine_version = ?, schema = ? WHERE id = 1",
    params([jsonString(engineVersion), jsonString(schemaText)]),
  );
  return INSTALL_MIGRATED;
}
