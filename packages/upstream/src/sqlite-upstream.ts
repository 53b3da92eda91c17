import type { UpstreamChange } from "@weir/protocol";
import {
  type ColumnType,
  type Schema,
  schemaProblems,
  UpstreamCallError,
  type UpstreamChangesPage,
  UpstreamGoneError,
  type UpstreamSnapshotPage,
  type UpstreamSource,
} from "@weir/protocol";
import Database from "better-sqlite3";

export interface SqliteUpstreamOptions {
  /** The SQLite file of the app's data (created if missing). */
  file: string;
  /** The tables to serve, as a weir schema: created when absent, captured either way. */
  schema: Schema;
  /** How many published watermarks of changes to keep (default 10,000); older cursors get 410. */
  keepWatermarks?: number;
}

export interface SqliteUpstream extends UpstreamSource {
  /** The app's database: write to its tables with any SQL, from any connection. */
  readonly db: Database.Database;
  /** Makes the changes written since the last call visible as one new watermark; answers it. */
  publish(): bigint;
  close(): void;
}

const CHANGES = "_weir_upstream_changes";
const CLOCK = "_weir_upstream_clock";
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;

interface TableInfo {
  name: string;
  columns: { name: string; type: ColumnType; nullable: boolean }[];
  key: string[];
  hasBytes: boolean;
}

function tableInfos(schema: Schema): TableInfo[] {
  const problems = schemaProblems(schema);
  if (problems.length > 0) throw new Error(`invalid ${problems[0]}`);
  return Object.entries(schema.tables).map(([name, table]) => {
    const columns = Object.entries(table.columns).map(([column, spec]) => {
      const { type, nullable } = typeof spec === "string" ? { type: spec, nullable: false } : spec;
      return { name: column, type, nullable: nullable === true && !table.primaryKey.includes(column) };
    });
    return { name, columns, key: [...table.primaryKey], hasBytes: columns.some((c) => c.type === "bytes") };
  });
}

const SQL_TYPES: Record<ColumnType, string> = {
  string: "TEXT",
  json: "TEXT",
  number: "REAL",
  integer: "INTEGER",
  boolean: "INTEGER",
  bytes: "BLOB",
};

/**
 * A column as the contract sends it, rendered by SQLite: integers beyond 2^53 as decimal text,
 * REALs exactly (15 digits when they suffice, else 17), booleans as true/false, JSON as itself,
 * bytes as hex (turned into base64 when served: SQLite has no base64).
 */
function encoded(type: ColumnType, ref: string): string {
  switch (type) {
    case "integer":
      return `CASE WHEN ${ref} BETWEEN -${MAX_SAFE} AND ${MAX_SAFE} THEN ${ref} ELSE CAST(${ref} AS TEXT) END`;
    case "number":
      return `CASE WHEN ${ref} IS NULL THEN NULL WHEN CAST(printf('%!.15g', ${ref}) AS REAL) = ${ref} THEN ${ref} ELSE json(printf('%!.17g', ${ref})) END`;
    case "boolean":
      return `json(CASE WHEN ${ref} IS NULL THEN NULL WHEN ${ref} THEN 'true' ELSE 'false' END)`;
    case "json":
      return `json(${ref})`;
    case "bytes":
      return `CASE WHEN ${ref} IS NULL THEN NULL ELSE hex(${ref}) END`;
    default:
      return ref;
  }
}

function rowObject(table: TableInfo, prefix: string, only?: string[]): string {
  const parts = table.columns
    .filter((column) => !only || only.includes(column.name))
    .map((column) => `'${column.name}', ${encoded(column.type, `${prefix}${quote(column.name)}`)}`);
  return `json_object(${parts.join(", ")})`;
}

function install(db: Database.Database, tables: TableInfo[]): void {
  db.exec(`CREATE TABLE IF NOT EXISTS ${CLOCK} (id INTEGER PRIMARY KEY CHECK (id = 1), published INTEGER NOT NULL, pruned INTEGER NOT NULL);
    INSERT OR IGNORE INTO ${CLOCK} VALUES (1, 0, 0);
    CREATE TABLE IF NOT EXISTS ${CHANGES} (seq INTEGER PRIMARY KEY, watermark INTEGER, tbl TEXT NOT NULL,
      op TEXT NOT NULL, row TEXT, old TEXT);
    CREATE INDEX IF NOT EXISTS ${CHANGES}_watermark ON ${CHANGES} (watermark);`);
  // Changes are written unpublished (watermark NULL); `publish` numbers them.
  for (const table of tables) {
    const columns = table.columns.map(
      (c) => `${quote(c.name)} ${SQL_TYPES[c.type]}${c.nullable ? "" : " NOT NULL"}`,
    );
    db.exec(
      `CREATE TABLE IF NOT EXISTS ${quote(table.name)} (${columns.join(", ")}, PRIMARY KEY (${table.key.map(quote).join(", ")}))`,
    );
    const trigger = (kind: string) => quote(`_weir_upstream_${table.name}_${kind}`);
    const log = (op: string, row: string, old: string) =>
      `INSERT INTO ${CHANGES} (watermark, tbl, op, row, old) VALUES (NULL, '${table.name}', '${op}', ${row}, ${old});`;
    const keyChanged = table.key.map((k) => `NEW.${quote(k)} IS NOT OLD.${quote(k)}`).join(" OR ");
    db.exec(`DROP TRIGGER IF EXISTS ${trigger("insert")}; DROP TRIGGER IF EXISTS ${trigger("update")};
      DROP TRIGGER IF EXISTS ${trigger("delete")};
      CREATE TRIGGER ${trigger("insert")} AFTER INSERT ON ${quote(table.name)} BEGIN ${log("INSERT", rowObject(table, "NEW."), "NULL")} END;
      CREATE TRIGGER ${trigger("update")} AFTER UPDATE ON ${quote(table.name)} BEGIN ${log("UPDATE", rowObject(table, "NEW."), `CASE WHEN ${keyChanged} THEN ${rowObject(table, "OLD.", table.key)} END`)} END;
      CREATE TRIGGER ${trigger("delete")} AFTER DELETE ON ${quote(table.name)} BEGIN ${log("DELETE", "NULL", rowObject(table, "OLD.", table.key))} END;`);
  }
}

function hexToBase64(hex: string): string {
  let binary = "";
  for (let i = 0; i < hex.length; i += 2)
    binary += String.fromCharCode(Number.parseInt(hex.slice(i, i + 2), 16));
  return btoa(binary);
}

/** Parses a rendered row; bytes columns go from hex to base64. */
function parseRow(table: TableInfo, text: string | null): Record<string, unknown> | null {
  if (text === null) return null;
  const row = JSON.parse(text) as Record<string, unknown>;
  if (table.hasBytes) {
    for (const column of table.columns) {
      const value = row[column.name];
      if (column.type === "bytes" && typeof value === "string") row[column.name] = hexToBase64(value);
    }
  }
  return row;
}

/**
 * An upstream source over a SQLite file: triggers capture every write to the schema's tables,
 * and `publish` (which reads call first) numbers what was written since as the next watermark,
 * so whole transactions always share one. Keeps the newest `keepWatermarks` watermarks.
 */
export function sqliteUpstream(options: SqliteUpstreamOptions): SqliteUpstream {
  const tables = tableInfos(options.schema);
  const byName = new Map(tables.map((table) => [table.name, table]));
  const keep = BigInt(options.keepWatermarks ?? 10_000);
  const db = new Database(options.file);
  db.pragma("journal_mode = WAL");
  db.pragma("busy_timeout = 5000");
  db.defaultSafeIntegers(true);
  install(db, tables);

  const clock = db.prepare(`SELECT published, pruned FROM ${CLOCK} WHERE id = 1`);
  const number = db.prepare(`UPDATE ${CHANGES} SET watermark = ? WHERE watermark IS NULL`);
  const advance = db.prepare(`UPDATE ${CLOCK} SET published = ?, pruned = ? WHERE id = 1`);
  const prune = db.prepare(`DELETE FROM ${CHANGES} WHERE watermark <= ?`);
  const pending = db.prepare(`SELECT 1 FROM ${CHANGES} WHERE watermark IS NULL LIMIT 1`);
  // Published watermarks grow with seq (publish numbers every unnumbered change at once), so
  // (watermark, seq) is seq's order, and the watermark index reads just the page: ordered by seq
  // alone, SQLite scans the whole log from its start for every page.
  const after = db.prepare(
    `SELECT watermark, tbl, op, row, old FROM ${CHANGES} WHERE watermark > ? ORDER BY watermark, seq LIMIT ?`,
  );
  const ofWatermark = db.prepare(
    `SELECT watermark, tbl, op, row, old FROM ${CHANGES} WHERE watermark = ? ORDER BY seq`,
  );
  const state = () => {
    const [published, pruned] = clock.raw().get() as [bigint, bigint];
    return { published, pruned };
  };

  const publish = db.transaction((): bigint => {
    const { published, pruned } = state();
    if (!pending.get()) return published;
    const next = published + 1n;
    number.run(next);
    const floor = next - keep > pruned ? next - keep : pruned;
    if (floor > pruned) prune.run(floor);
    advance.run(next, floor);
    return next;
  });

  const changes = db.transaction((watermark: bigint, limit: number): UpstreamChangesPage => {
    const { published, pruned } = state();
    if (watermark < pruned || watermark > published) throw new UpstreamGoneError(pruned);
    // Whole watermarks only: a page that reaches the limit ends with all of its last watermark.
    type Change = [bigint, string, string, string | null, string | null];
    const read = after.raw().all(watermark, limit) as Change[];
    let included = read;
    let reached = published;
    if (read.length >= limit) {
      reached = read[read.length - 1]![0];
      included = [
        ...read.filter((change) => change[0] < reached),
        ...(ofWatermark.raw().all(reached) as Change[]),
      ];
    }
    return {
      watermark: reached,
      changes: included.map(([w, tbl, op, row, old]): UpstreamChange => {
        const table = byName.get(tbl)!;
        return {
          watermark: w,
          tableName: tbl,
          op: op as UpstreamChange["op"],
          rowData: parseRow(table, row),
          oldData: parseRow(table, old),
        };
      }),
    };
  });

  const snapshotReads = new Map<string, Database.Statement>();
  const snapshot = db.transaction(
    (table: TableInfo, cursor: unknown[] | null, limit: number): UpstreamSnapshotPage => {
      const { published } = state();
      const key = table.key.map(quote).join(", ");
      const where = cursor === null ? "" : `WHERE (${key}) > (${table.key.map(() => "?").join(", ")})`;
      // The cursor holds the key as text, so integers beyond 2^53 survive JSON.
      const cursorOf = table.key.map((k) => `CAST(${quote(k)} AS TEXT)`).join(", ");
      const sql = `SELECT ${rowObject(table, "")}, json_array(${cursorOf}) FROM ${quote(table.name)} ${where} ORDER BY ${key} LIMIT ?`;
      let read = snapshotReads.get(sql);
      if (!read) {
        read = db.prepare(sql).raw(true);
        snapshotReads.set(sql, read);
      }
      const rows = read.all(...(cursor ?? []), limit) as [string, string][];
      return {
        watermark: published,
        rows: rows.map(([row]) => parseRow(table, row)!),
        nextCursor: rows.length < limit ? null : rows[rows.length - 1]![1],
      };
    },
  );

  return {
    db,
    publish,
    async changes(watermark, limit) {
      publish();
      return changes(watermark, limit);
    },
    async snapshotPage(tableName, cursor, limit) {
      const table = byName.get(tableName);
      if (!table) throw new UpstreamCallError(404, "not_found", `no table ${tableName} upstream`);
      publish();
      return snapshot(table, cursor === null ? null : parseCursor(cursor, table), limit);
    },
    close: () => db.close(),
  };
}

function parseCursor(cursor: string, table: TableInfo): unknown[] {
  let key: unknown;
  try {
    key = JSON.parse(cursor);
  } catch {
    key = undefined;
  }
  if (!Array.isArray(key) || key.length !== table.key.length)
    throw new UpstreamCallError(400, "bad_request", `not a snapshot cursor: ${cursor.slice(0, 100)}`);
  return key;
}
