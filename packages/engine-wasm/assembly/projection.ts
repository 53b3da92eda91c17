// SQL expressions that render a row in its wire form, so that SQLite builds the JSON of every
// row and the engine crosses the host boundary once per query, not once per row.
import { FORMAT_REPLICACHE } from "../src/abi";
import { Column, Table, TYPE_BOOLEAN, TYPE_BYTES, TYPE_INTEGER, TYPE_JSON, TYPE_NUMBER } from "./schema";
import { ident, jsonString, literal } from "./text";

// Digits that let `%!.Ng` round-trip any double: the shortest N that reads back equal is the
// shortest exact decimal. SQLite renders a REAL in JSON with 15 significant digits (some
// versions with no more), which would round other values on their way to the client. So a
// value that 15 digits represent exactly (whole numbers below 10^15 tested first, without
// printf) is embedded as it is, and only the rest are printed with 16 or 17 digits.
function realJson(ref: string): string {
  const p15 = "printf('%!.15g', " + ref + ")";
  const p16 = "printf('%!.16g', " + ref + ")";
  const p17 = "printf('%!.17g', " + ref + ")";
  return (
    "CASE WHEN " +
    ref +
    " IS NULL OR abs(" +
    ref +
    ") > 1.7976931348623157e308 THEN NULL " +
    "WHEN " +
    ref +
    " = CAST(" +
    ref +
    " AS INTEGER) AND abs(" +
    ref +
    ") < 1e15 THEN " +
    ref +
    " WHEN CAST(" +
    p15 +
    " AS REAL) = " +
    ref +
    " THEN " +
    ref +
    " WHEN CAST(" +
    p16 +
    " AS REAL) = " +
    ref +
    " THEN json(" +
    p16 +
    ") " +
    "ELSE json(" +
    p17 +
    ") END"
  );
}

// An integer beyond 2^53 would reach a client's JSON.parse rounded (2^53 + 1 reads as 2^53), so
// it travels as its decimal text, as the upstream contract and watermarks send it; the integers
// JavaScript holds exactly stay JSON numbers.
function integerJson(ref: string): string {
  return (
    "CASE WHEN " +
    ref +
    " BETWEEN -9007199254740991 AND 9007199254740991 THEN " +
    ref +
    " ELSE CAST(" +
    ref +
    " AS TEXT) END"
  );
}

/** A column's value as json_object should embed it. */
function encodeColumn(column: Column, ref: string): string {
  if (column.type == TYPE_INTEGER) return integerJson(ref);
  if (column.type == TYPE_NUMBER) return realJson(ref);
  if (column.type == TYPE_BOOLEAN) {
    return "json(CASE WHEN " + ref + " IS NULL THEN NULL WHEN " + ref + " THEN 'true' ELSE 'false' END)";
  }
  if (column.type == TYPE_JSON) return "json(" + ref + ")";
  if (column.type == TYPE_BYTES)
    return "CASE WHEN " + ref + " IS NULL THEN NULL ELSE lower(hex(" + ref + ")) END";
  return ref;
}

/** A column of the row at `alias` (no alias: the column's name unqualified). */
function columnRef(alias: string, column: Column): string {
  return alias.length > 0 ? alias + "." + ident(column.name) : ident(column.name);
}

function rowValue(table: Table, alias: string): string {
  const parts: string[] = [];
  for (let i = 0; i < table.columns.length; i++) {
    const column = table.columns[i];
    parts.push(literal(column.name) + ", " + encodeColumn(column, columnRef(alias, column)));
  }
  return "json_object(" + parts.join(", ") + ")";
}

// A Replicache key is "<table>/<pk>"; the parts of a composite key are joined by "/".
// Inside a part, "~" is written "~0" and "/" is written "~1" (as in JSON Pointer), so a key
// always splits back into the parts it was made of.
function keyPart(column: Column, ref: string): string {
  if (column.type == TYPE_INTEGER) return "CAST(" + ref + " AS TEXT)";
  return "replace(replace(" + ref + ", '~', '~0'), '/', '~1')";
}

function replicacheKey(table: Table, refs: Array<string>): string {
  const parts: string[] = [];
  for (let i = 0; i < table.primaryKey.length; i++) parts.push(keyPart(table.primaryKey[i], refs[i]));
  return literal(table.name + "/") + " || " + parts.join(" || '/' || ");
}

function columnRefs(table: Table, alias: string): Array<string> {
  const refs: string[] = [];
  for (let i = 0; i < table.primaryKey.length; i++) refs.push(columnRef(alias, table.primaryKey[i]));
  return refs;
}

/**
 * The put operation for the current row of `table` (at `alias`, or by unqualified names). Its
 * frame is joined as text around the row's object: json_object would parse that object back
 * before embedding it, which costs about a fifth of rendering a row.
 */
export function putOp(table: Table, format: i32, alias: string = ""): string {
  if (format == FORMAT_REPLICACHE) {
    return (
      literal('{"op":"put","key":') +
      " || json_quote(" +
      replicacheKey(table, columnRefs(table, alias)) +
      ") || " +
      literal(',"value":') +
      " || " +
      rowValue(table, alias) +
      " || '}'"
    );
  }
  return (
    literal('{"op":"put","tableName":' + jsonString(table.name) + ',"value":') +
    " || " +
    rowValue(table, alias) +
    " || '}'"
  );
}

/** The del operation for a key held as a JSON array in `keyRef`. */
export function delOp(table: Table, format: i32, keyRef: string): string {
  const refs: string[] = [];
  for (let i = 0; i < table.primaryKey.length; i++)
    refs.push("json_extract(" + keyRef + ", '$[" + i.toString() + "]')");
  if (format == FORMAT_REPLICACHE) {
    return "json_object('op', 'del', 'key', " + replicacheKey(table, refs) + ")";
  }
  const parts: string[] = [];
  for (let i = 0; i < table.primaryKey.length; i++)
    parts.push(literal(table.primaryKey[i].name) + ", " + encodeColumn(table.primaryKey[i], refs[i]));
  return (
    "json_object('op', 'del', 'tableName', " +
    literal(table.name) +
    ", 'id', json_object(" +
    parts.join(", ") +
    "))"
  );
}

/** `WHERE` terms matching the live row whose key is the JSON array in `keyRef`. */
export function keyMatch(table: Table, keyRef: string, alias: string = ""): string {
  const parts: string[] = [];
  for (let i = 0; i < table.primaryKey.length; i++) {
    parts.push(
      columnRef(alias, table.primaryKey[i]) + " = json_extract(" + keyRef + ", '$[" + i.toString() + "]')",
    );
  }
  return parts.join(" AND ");
}
