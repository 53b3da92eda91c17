import { FILTER_ENTRY_SEPARATOR, FILTER_FIELD_SEPARATOR } from "./abi.js";
import { EngineError } from "./engine-error.js";
import type { Schema, SqlValue, Visibility } from "./types.js";

export interface VisibilityText {
  text: string;
  /** The filters' values in order; the engine refers to them by position. */
  values: SqlValue[];
}

export const NO_VISIBILITY: VisibilityText = { text: "", values: [] };

/** Checks the filters against the schema and writes them in the engine's compact form. */
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
  return compactVisibility(visibility);
}

function compactVisibility(visibility: Visibility | undefined): VisibilityText {
  if (!visibility) return NO_VISIBILITY;
  const entries: string[] = [];
  const values: SqlValue[] = [];
  for (const [table, filter] of Object.entries(visibility)) {
    const params = filter.params ?? [];
    entries.push(`${table}${FILTER_FIELD_SEPARATOR}${params.length}${FILTER_FIELD_SEPARATOR}${filter.sql}`);
    values.push(...params);
  }
  return { text: entries.join(FILTER_ENTRY_SEPARATOR), values };
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
  return `${visibility.text}${FILTER_ENTRY_SEPARATOR}${values}`;
}
