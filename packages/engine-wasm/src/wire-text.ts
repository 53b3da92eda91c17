// The text that crosses between the engine and its host: query results, parameters, pull bodies.
import { COLUMN_SEPARATOR, EXTRA_PARAM_KEY, ROW_SEPARATOR, ROWS_AFTER_OP_HERE, ROWS_HERE } from "./abi.js";
import type { SqlValue } from "./types.js";

interface PlaceholderRef {
  $: number;
}

export function isPlaceholder(value: unknown): value is PlaceholderRef {
  return typeof value === "object" && value !== null && EXTRA_PARAM_KEY in value;
}

/** Rows as the engine reads them: "\n" between rows, "\t" between columns. */
export function rowsText(rows: SqlValue[][]): string {
  if (rows.length === 0) return "";
  if (rows[0]!.length === 1) {
    // One value (a preflight's last id, a state figure): as join would write it, null as "".
    if (rows.length === 1) return String(rows[0]![0] ?? "");
    return rows.join(ROW_SEPARATOR);
  }
  return rows.map((row) => row.join(COLUMN_SEPARATOR)).join(ROW_SEPARATOR);
}

/**
 * Puts the included payloads, joined by commas, at the body's splice mark (concatenation, not a
 * copying replace).
 */
export function splice(body: string, joined: string): string {
  const afterOp = body.indexOf(ROWS_AFTER_OP_HERE);
  const at = afterOp >= 0 ? afterOp : body.indexOf(ROWS_HERE);
  if (at < 0) return body;
  const inserted = afterOp >= 0 && joined.length > 0 ? "," + joined : joined;
  return body.slice(0, at) + inserted + body.slice(at + 1);
}

// json_object writes "op" first, so a payload's operation name starts at a fixed offset.
const OP_NAME_OFFSET = 7;
const P = "p".charCodeAt(0);

/** How many of a pull's row payloads are puts (the rest are dels). */
export function countPuts(rows: readonly string[]): number {
  let puts = 0;
  for (const row of rows) if (row.charCodeAt(OP_NAME_OFFSET) === P) puts++;
  return puts;
}
