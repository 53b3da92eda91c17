/** Renders a JSON-like value as aligned `key: value` lines, nesting objects with indentation. */
export function formatFields(value: Record<string, unknown>, indent = ""): string {
  const keys = Object.keys(value);
  const width = Math.max(0, ...keys.map((key) => key.length));
  const lines: string[] = [];
  for (const key of keys) {
    const field = value[key];
    const label = `${indent}${`${key}:`.padEnd(width + 1)}`;
    if (
      field !== null &&
      typeof field === "object" &&
      !Array.isArray(field) &&
      Object.keys(field).length > 0
    ) {
      lines.push(`${indent}${key}:`);
      const nested = formatFields(field as Record<string, unknown>, `${indent}  `);
      if (nested) lines.push(nested);
    } else {
      lines.push(`${label} ${formatScalar(field)}`);
    }
  }
  return lines.join("\n");
}

function formatScalar(value: unknown): string {
  if (value !== null && typeof value === "object" && Object.keys(value).length === 0) return "none";
  if (typeof value === "number") return formatNumber(value);
  if (typeof value === "string") return value;
  return JSON.stringify(value) ?? String(value);
}

/** Integers with thousands separators, fractions to three significant decimals. */
export function formatNumber(value: number): string {
  if (Number.isInteger(value)) return value.toLocaleString("en-US");
  return value.toLocaleString("en-US", { maximumFractionDigits: value < 10 ? 2 : 1 });
}

/** A plain text table: a header row, then one row per record, columns left-aligned. */
export function formatTable(headers: readonly string[], rows: readonly (readonly unknown[])[]): string {
  const cells = [headers, ...rows.map((row) => row.map((cell) => formatScalar(cell)))];
  const widths = headers.map((_, column) =>
    Math.max(...cells.map((row) => String(row[column] ?? "").length)),
  );
  return cells
    .map((row) =>
      row
        .map((cell, column) => String(cell ?? "").padEnd(widths[column] ?? 0))
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}
