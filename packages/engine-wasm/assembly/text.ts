// Building SQL and JSON text safely.

/** An SQL identifier, quoted so that no name can break out of it. */
export function ident(name: string): string {
  return '"' + name.replaceAll('"', '""') + '"';
}

/** An SQL string literal. */
export function literal(value: string): string {
  return "'" + value.replaceAll("'", "''") + "'";
}

const HEX = "0123456789abcdef";

/** A JSON string literal. */
export function jsonString(value: string): string {
  const parts: string[] = [];
  parts.push('"');
  let start = 0;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c >= 0x20 && c != 0x22 && c != 0x5c) continue;
    if (i > start) parts.push(value.substring(start, i));
    if (c == 0x22) parts.push('\\"');
    else if (c == 0x5c) parts.push("\\\\");
    else if (c == 0x0a) parts.push("\\n");
    else if (c == 0x0d) parts.push("\\r");
    else if (c == 0x09) parts.push("\\t");
    else parts.push("\\u00" + HEX.charAt(c >> 4) + HEX.charAt(c & 15));
    start = i + 1;
  }
  if (start < value.length) parts.push(value.substring(start));
  parts.push('"');
  return parts.join("");
}

export function parseI64(text: string): i64 {
  return text.length == 0 ? 0 : I64.parseInt(text, 10);
}

/** A JSON array of parameters from already-encoded JSON values. */
export function params(values: Array<string>): string {
  return "[" + values.join(",") + "]";
}
