import type { Schema, SqlAdapter } from "./types.js";
import { columnType } from "./visibility-terms.js";

/** Changes of one version have seqs from version * 2^24 (as the engine's log numbers them). */
const CHANGES_PER_VERSION = 16_777_216;

/**
 * A question about the rows a span of versions changed: for a `key` probe, which values of
 * `column` their images (before and after each change) hold among those that pass `where`;
 * for a `predicate` probe, whether any image passes `where`. `where` is "" for no condition.
 */
export type AudienceProbe =
  | { table: string; kind: "key"; column: string; where: string }
  | { table: string; kind: "predicate"; where: string };

export interface ChangeAudience {
  /** The changes since `since` are no longer all in the log (a reset, retention): everyone. */
  everyone: boolean;
  /** The tables whose rows changed. */
  tables: Set<string>;
  /** By probe (in the order asked): the keys found (`key`), or whether an image passed. */
  answers: Array<Set<string> | boolean>;
  /** The newest committed version: the span this answer covers ends there. */
  through: number;
}

/**
 * Whom the versions after `since` concern, told by their rows' images: the values they had
 * before each change (the prior tables) and have now (the live rows). One statement per changed
 * table and per probe of a changed table, each over the span's changes only.
 */
export function changeAudience(
  db: SqlAdapter,
  schema: Schema,
  since: number,
  probes: readonly AudienceProbe[],
): ChangeAudience {
  const [state] = db.query(
    "SELECT floor, (SELECT version FROM _weir_changes ORDER BY seq DESC LIMIT 1) FROM _weir_state WHERE id = 1",
    [],
  );
  const floor = Number(state?.[0] ?? 0);
  const through = Number(state?.[1] ?? 0);
  const answers: Array<Set<string> | boolean> = probes.map((p) =>
    p.kind === "key" ? new Set<string>() : false,
  );
  // A floor past `since` means changes after it were pruned or invalidated: a reset for all.
  if (floor > since) return { everyone: true, tables: new Set(), answers, through };
  const from = (since + 1) * CHANGES_PER_VERSION;
  const tables = new Set(
    db
      .query("SELECT DISTINCT tbl FROM _weir_changes WHERE seq >= ? AND tbl <> ''", [from])
      .map((row) => String(row[0])),
  );
  for (const [index, probe] of probes.entries()) {
    if (!tables.has(probe.table) || !Object.hasOwn(schema.tables, probe.table)) continue;
    const images = imagesSql(schema, probe.table);
    const where = probe.where === "" ? "" : ` AND (${probe.where})`;
    if (probe.kind === "predicate") {
      const passed = db.query(`SELECT 1 FROM (${images}) AS "${probe.table}" WHERE 1${where} LIMIT 1`, [
        from,
        from,
      ]);
      answers[index] = passed.length > 0;
      continue;
    }
    const type = columnType(schema, probe.table, probe.column);
    const prefix = type === "integer" ? "i" : type === "string" ? "s" : null;
    if (prefix === null) continue;
    const column = `"${probe.table}"."${probe.column}"`;
    const rows = db.query(
      `SELECT DISTINCT CAST(${column} AS TEXT) FROM (${images}) AS "${probe.table}" WHERE ${column} IS NOT NULL${where}`,
      [from, from],
    );
    const keys = answers[index] as Set<string>;
    for (const row of rows) keys.add(`${prefix}${String(row[0])}`);
  }
  return { everyone: false, tables, answers, through };
}

/** A table's rows as each change since the bound seq found them and left them. */
function imagesSql(schema: Schema, table: string): string {
  const names = Object.keys(schema.tables[table]!.columns).map((name) => `"${name}"`);
  const key = schema.tables[table]!.primaryKey.map(
    (name, i) => `r."${name}" = json_extract(c.pk, '$[${i}]')`,
  );
  const range = `c.seq >= ? AND c.tbl = '${table}'`;
  return (
    `SELECT ${names.map((n) => `p.${n}`).join(", ")} FROM _weir_changes AS c JOIN "_weir_prior_${table}" AS p ` +
    `ON p._weir_seq = c.seq WHERE ${range} AND c.existed = 1 UNION ALL ` +
    `SELECT ${names.map((n) => `r.${n}`).join(", ")} FROM _weir_changes AS c JOIN "${table}" AS r ON ${key.join(" AND ")} WHERE ${range}`
  );
}
