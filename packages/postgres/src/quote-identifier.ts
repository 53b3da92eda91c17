/** A PostgreSQL identifier quoted for SQL text (names come from options, never from requests). */
export function quoteIdentifier(identifier: string): string {
  return `"${identifier.replaceAll('"', '""')}"`;
}
