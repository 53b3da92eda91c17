// Building SQL and JSON text safely.
import { EXTRA_PARAM_KEY } from "../src/abi";

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

/** Whether `value` can go into a JSON string literal as it is. */
function isPlainJson(value: string): bool {
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c < 0x20 || c == 0x22 || c == 0x5c) return false;
  }
  return true;
}

/**
 * A JSON array of two strings and, when `last` is not negative, a number: the parameters of the
 * push steps, built with one allocation in the common case (hot path: every mutation).
 */
export function stringsParams(a: string, b: string, last: i64 = -1): string {
  if (!isPlainJson(a) || !isPlainJson(b)) {
    const tail = last >= 0 ? "," + last.toString() : "";
    return "[" + jsonString(a) + "," + jsonString(b) + tail + "]";
  }
  const number = last >= 0 ? last.toString() : "";
  // ["a","b"] or ["a","b",n]
  const length = 7 + a.length + b.length + (last >= 0 ? 1 + number.length : 0);
  const out = changetype<string>(__new((<usize>length) << 1, idof<string>()));
  let at = changetype<usize>(out);
  at = put(at, '["');
  at = put(at, a);
  at = put(at, '","');
  at = put(at, b);
  at = put(at, '"');
  if (last >= 0) {
    at = put(at, ",");
    at = put(at, number);
  }
  put(at, "]");
  return out;
}

function put(at: usize, text: string): usize {
  const bytes = (<usize>text.length) << 1;
  memory.copy(at, changetype<usize>(text), bytes);
  return at + bytes;
}

/** A parameter that stands for the call's extra parameter `index`, which stays on the host side. */
export function extraParam(index: i32): string {
  return '{"' + EXTRA_PARAM_KEY + '":' + index.toString() + "}";
}

/**
 * SELECTs joined by UNION ALL as a tree of compounds of two terms each: some SQLite builds (a
 * Durable Object's) allow only a few terms in one compound SELECT. Each part must be a whole
 * SELECT whose columns are named alike.
 */
export function unionAll(parts: Array<string>): string {
  if (parts.length == 1) return parts[0];
  if (parts.length == 2) return parts[0] + " UNION ALL " + parts[1];
  const half = parts.length >> 1;
  return (
    "SELECT * FROM (" +
    unionAll(parts.slice(0, half)) +
    ") UNION ALL SELECT * FROM (" +
    unionAll(parts.slice(half)) +
    ")"
  );
}
