// The declared schema of a namespace, as the loader serializes it after validation:
// "<table>|<pk1>,<pk2>|<col>:<type>:<nullable 0|1>,...;<table>|...". Names are already checked
// to be plain identifiers (they are quoted anyway), so the text needs no escaping and is stored
// as it is in the engine's state row.
import { Statement } from "./host";
import { appendToLog, appendToLogWhen, NEXT_SEQ } from "./state";
import { ident, literal } from "./text";

const TABLE_SEPARATOR = ";";
const FIELD_SEPARATOR = "|";

const TYPE_STRING = "string";
export const TYPE_NUMBER = "number";
export const TYPE_INTEGER = "integer";
export const TYPE_BOOLEAN = "boolean";
export const TYPE_JSON = "json";
export const TYPE_BYTES = "bytes";

export class Column {
  constructor(
    public name: string,
    public type: string,
    public nullable: bool,
  ) {}

  sqlType(): string {
    if (this.type == TYPE_STRING || this.type == TYPE_JSON) return "TEXT";
    if (this.type == TYPE_NUMBER) return "REAL";
    if (this.type == TYPE_BYTES) return "BLOB";
    return "INTEGER";
  }

  /** The column's definition in CREATE TABLE / ALTER TABLE. */
  definition(): string {
    const name = ident(this.name);
    let sql = name + " " + this.sqlType();
    if (!this.nullable) sql += " NOT NULL";
    if (this.type == TYPE_BOOLEAN) sql += " CHECK (" + name + " IN (0, 1))";
    if (this.type == TYPE_JSON) sql += " CHECK (json_valid(" + name + "))";
    return sql;
  }
}

export class Table {
  columns: Array<Column> = [] as Column[];
  primaryKey: Array<Column> = [] as Column[];

  constructor(public name: string) {}

  column(name: string): Column | null {
    for (let i = 0; i < this.columns.length; i++) {
      if (this.columns[i].name == name) return this.columns[i];
    }
    return null;
  }
}

export class Schema {
  tables: Array<Table> = [] as Table[];
  /**
   * Statements built from the schema alone (and fixed values), by a key naming what they do:
   * built and registered once, then named by number.
   */
  private statements: Map<string, Statement> = new Map<string, Statement>();

  /** The statement stored under `key`, or null when none is. */
  statement(key: string): Statement | null {
    return this.statements.has(key) ? this.statements.get(key) : null;
  }

  /** Stores a statement under `key` and answers it. */
  keep(key: string, sql: string): Statement {
    const statement = new Statement(sql);
    this.statements.set(key, statement);
    return statement;
  }

  table(name: string): Table | null {
    for (let i = 0; i < this.tables.length; i++) {
      if (this.tables[i].name == name) return this.tables[i];
    }
    return null;
  }
}

export function parseSchema(text: string): Schema {
  const schema = new Schema();
  if (text.length == 0) return schema;
  const lines = text.split(TABLE_SEPARATOR);
  for (let i = 0; i < lines.length; i++) {
    const parts = lines[i].split(FIELD_SEPARATOR);
    const table = new Table(parts[0]);
    const columns = parts[2].split(",");
    for (let j = 0; j < columns.length; j++) {
      const fields = columns[j].split(":");
      table.columns.push(new Column(fields[0], fields[1], fields[2] == "1"));
    }
    const keys = parts[1].split(",");
    for (let j = 0; j < keys.length; j++) table.primaryKey.push(table.column(keys[j])!);
    schema.tables.push(table);
  }
  return schema;
}

/** The table's CREATE TABLE, under its own name or another (`name` already quoted). */
export function createTableSql(table: Table, name: string = ident(table.name)): string {
  const defs: string[] = [];
  for (let i = 0; i < table.columns.length; i++) defs.push(table.columns[i].definition());
  const keys: string[] = [];
  for (let i = 0; i < table.primaryKey.length; i++) keys.push(ident(table.primaryKey[i].name));
  defs.push("PRIMARY KEY (" + keys.join(", ") + ")");
  // A single integer key is the rowid already; any other key makes the table WITHOUT ROWID, so
  // a row is stored once, in key order, and a write touches one b-tree instead of two.
  const rowidKey = table.primaryKey.length == 1 && table.primaryKey[0].type == TYPE_INTEGER;
  return (
    "CREATE TABLE IF NOT EXISTS " +
    name +
    " (" +
    defs.join(", ") +
    ") STRICT" +
    (rowidKey ? "" : ", WITHOUT ROWID")
  );
}

function triggerName(table: Table, kind: string): string {
  return ident("_weir_capture_" + table.name + "_" + kind);
}

export function dropTriggersSql(table: Table): Array<string> {
  return [
    "DROP TRIGGER IF EXISTS " + triggerName(table, "insert"),
    "DROP TRIGGER IF EXISTS " + triggerName(table, "update"),
    "DROP TRIGGER IF EXISTS " + triggerName(table, "delete"),
  ];
}

function keyArray(table: Table, row: string): string {
  const parts: string[] = [];
  for (let i = 0; i < table.primaryKey.length; i++) parts.push(row + "." + ident(table.primaryKey[i].name));
  return "json_array(" + parts.join(", ") + ")";
}

/**
 * The table that keeps a row's values as they were before a change, under the change's seq, so
 * that a pull can judge whether a client could hold the row. Its columns have the table's types
 * (and so the same affinity in comparisons), and hold the values exactly.
 */
export function priorTableName(table: Table): string {
  return ident("_weir_prior_" + table.name);
}

/** The prior table's key: the change's seq, under a reserved name no app column can take. */
export const PRIOR_SEQ = "_weir_seq";

export function createPriorTableSql(table: Table): string {
  const defs: string[] = [PRIOR_SEQ + " INTEGER PRIMARY KEY"];
  for (let i = 0; i < table.columns.length; i++) {
    const column = table.columns[i];
    defs.push(ident(column.name) + " " + column.sqlType());
  }
  return "CREATE TABLE IF NOT EXISTS " + priorTableName(table) + " (" + defs.join(", ") + ")";
}

/** Keeps the OLD row under the seq the change's log row is about to take. */
function keepPrior(table: Table): string {
  const names: string[] = [PRIOR_SEQ];
  const values: string[] = [NEXT_SEQ];
  for (let i = 0; i < table.columns.length; i++) {
    const name = ident(table.columns[i].name);
    names.push(name);
    values.push("OLD." + name);
  }
  return (
    "INSERT INTO " + priorTableName(table) + " (" + names.join(", ") + ") VALUES (" + values.join(", ") + ");"
  );
}

function keyChanged(table: Table): string {
  const parts: string[] = [];
  for (let i = 0; i < table.primaryKey.length; i++) {
    const name = ident(table.primaryKey[i].name);
    parts.push("NEW." + name + " IS NOT OLD." + name);
  }
  return parts.join(" OR ");
}

// Changes made in a transaction belong to the version the transaction will commit as (see
// state.ts): `finalize`, or any other committing step, then appends the commit marker.
function logChange(table: Table, key: string, existed: string): string {
  return appendToLog(literal(table.name) + ", " + key + ", " + existed) + ";";
}

// Deletes that REPLACE makes (INSERT OR REPLACE, REPLACE, UPDATE OR REPLACE) fire the delete
// trigger because install turns recursive_triggers on.
export function createTriggersSql(table: Table): Array<string> {
  const on = " ON " + ident(table.name) + " BEGIN ";
  return [
    "CREATE TRIGGER " +
      triggerName(table, "insert") +
      " AFTER INSERT" +
      on +
      logChange(table, keyArray(table, "NEW"), "NULL") +
      " END",
    "CREATE TRIGGER " +
      triggerName(table, "update") +
      " AFTER UPDATE" +
      on +
      keepPrior(table) +
      " " +
      logChange(table, keyArray(table, "OLD"), "1") +
      " " +
      appendToLogWhen(literal(table.name) + ", " + keyArray(table, "NEW") + ", NULL", keyChanged(table)) +
      "; END",
    "CREATE TRIGGER " +
      triggerName(table, "delete") +
      " AFTER DELETE" +
      on +
      keepPrior(table) +
      " " +
      logChange(table, keyArray(table, "OLD"), "1") +
      " END",
  ];
}
