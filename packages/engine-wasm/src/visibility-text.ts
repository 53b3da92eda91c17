import { FILTER_ENTRY_SEPARATOR, FILTER_FIELD_SEPARATOR } from "./abi.js";
import { EngineError } from "./engine-error.js";
import type { Schema, SqlValue, Visibility } from "./types.js";
import { narrowingKeys } from "./visibility-terms.js";

export interface VisibilityText {
  text: string;
  /** The filters' values in order; the engine refers to them by position. */
  values: SqlValue[];
}

const NO_VISIBILITY: VisibilityText = { text: "", values: [] };

/**
 * Checks the filters against the schema and writes them in the engine's compact form. Each
 * filter that `column = ?` keys narrow carries them too, as `column:param` (the parameter's
 * position among the filter's own) joined by commas: the engine reads the changes such a table
 * concerns through its change keys (assembly/change-keys.ts) instead of all of them.
 */
export function visibilityText(schema: Schema, visibility: Visibility | undefined): VisibilityText {
  if (!visibility) return NO_VISIBILITY;
  for (const [table, filter] of Object.entries(visibility)) {
    if (!Object.hasOwn(schema.tables, table)) {
      throw new EngineError("internal", `visibility names ${table}, which is not in the schema`);
    }
    if (
      typeof filter.sql !== "string" ||
      filter.sql.trim() === "" ||
      filter.sql.includes(FILTER_FIELD_SEPARATOR) ||
      filter.sql.includes(FILTER_ENTRY_SEPARATOR)
    ) {
      throw new EngineError("internal", `the visibility filter of ${table} is not a usable SQL expression`);
    }
  }
  return compactVisibility(visibility, schema);
}

function compactVisibility(visibility: Visibility | undefined, schema?: Schema): VisibilityText {
  if (!visibility) return NO_VISIBILITY;
  const entries: string[] = [];
  const values: SqlValue[] = [];
  for (const [table, filter] of Object.entries(visibility)) {
    const params = filter.params ?? [];
    let entry = `${table}${FILTER_FIELD_SEPARATOR}${params.length}${FILTER_FIELD_SEPARATOR}${filter.sql}`;
    const keys = schema ? narrowingKeys(schema, table, filter.sql, params) : null;
    if (keys) entry += FILTER_FIELD_SEPARATOR + keys.map((key) => `${key.column}:${key.param}`).join(",");
    entries.push(entry);
    values.push(...params);
  }
  return { text: entries.join(FILTER_ENTRY_SEPARATOR), values };
}

/** The filters' text without the keys that narrow them: what filters rows, not how they are read. */
function filtersOnly(text: string): string {
  if (!text.includes(FILTER_FIELD_SEPARATOR)) return text;
  return text
    .split(FILTER_ENTRY_SEPARATOR)
    .map((entry) => entry.split(FILTER_FIELD_SEPARATOR).slice(0, 3).join(FILTER_FIELD_SEPARATOR))
    .join(FILTER_ENTRY_SEPARATOR);
}

/**
 * The identity (`visibilityIdentity`) of a pull's visibility, as the engine stores it with the
 * client group its pull answers: a host that answers pulls from memory keys them by it too.
 */
export function pullVisibilityIdentity(visibility: Visibility | undefined): string {
  return visibilityIdentity(compactVisibility(visibility));
}

/**
 * One text per visibility (filters and values): equal texts filter every row alike. The engine
 * keeps it with a group's query rows, and copies rows only between groups of the same one.
 */
export function visibilityIdentity(visibility: VisibilityText): string {
  const values = JSON.stringify(visibility.values, (_key, value: unknown) => {
    if (typeof value === "bigint") return { bigint: value.toString() };
    if (value instanceof Uint8Array) {
      return { bytes: Array.from(value, (byte) => byte.toString(16).padStart(2, "0")).join("") };
    }
    return value;
  });
  return `${filtersOnly(visibility.text)}${FILTER_ENTRY_SEPARATOR}${values}`;
}
