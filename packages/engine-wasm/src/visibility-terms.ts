import type { ColumnType, Schema, SqlValue, Visibility } from "./types.js";

/**
 * What a caller's filter of one table says about the rows it admits, so that a commit can tell
 * whom it concerns without evaluating the filter once per caller. A filter is read as a
 * disjunction (top-level `OR`) of terms; each term is one of:
 * - `key`: it holds only for rows whose `column` equals the caller's `key` (a top-level conjunct
 *   `column = ?` whose parameter has the column's type), and then only if `where` (its conjuncts
 *   without parameters, "" for none) holds too. `exact` is false when other conjuncts take
 *   parameters: the term may then admit fewer rows than the key and `where` say;
 * - `predicate`: it takes no parameters, so `where` holds for a row whoever asks;
 * - `any`: it cannot be narrowed (parameters but no key): any row of the table may pass it.
 */
export type VisibilityTerm =
  | { table: string; kind: "key"; column: string; key: string; where: string; exact: boolean }
  | { table: string; kind: "predicate"; where: string }
  | { table: string; kind: "any" };

/**
 * The terms of every table's filter; a table without a filter is visible in full (`any`, as is
 * every table when `visibility` is undefined: a caller without filters sees every row).
 */
export function visibilityTerms(schema: Schema, visibility: Visibility | undefined): VisibilityTerm[] {
  const terms: VisibilityTerm[] = [];
  for (const table of Object.keys(schema.tables)) {
    const filter = visibility?.[table];
    if (!filter) {
      terms.push({ table, kind: "any" });
      continue;
    }
    for (const term of filterTerms(schema, table, filter.sql, filter.params ?? [])) {
      if (term.kind !== "key") terms.push(term);
      else {
        const { param: _param, ...key } = term;
        terms.push(key);
      }
    }
  }
  return terms;
}

/** The key a value of a column of `type` is indexed by (null: such values are not keys). */
export function keyOf(type: ColumnType, value: SqlValue): string | null {
  if (type === "string" && typeof value === "string") return `s${value}`;
  if (type === "integer" && typeof value === "bigint") return `i${value}`;
  if (type === "integer" && typeof value === "number" && Number.isSafeInteger(value)) return `i${value}`;
  return null;
}

/** The type of a column as the schema declares it, or null when the table has no such column. */
export function columnType(schema: Schema, table: string, column: string): ColumnType | null {
  const declared = schema.tables[table]?.columns[column];
  if (declared === undefined) return null;
  return typeof declared === "string" ? declared : declared.type;
}

/**
 * The `column = ?` keys a table's filter is narrowed by, each with the position of its parameter
 * among the filter's own, when every OR branch of the filter has one: a row the filter admits
 * then has one of these columns equal to its parameter. Null when some branch has none (a
 * predicate, or what cannot be narrowed): the filter may admit a row whatever its keys hold.
 */
export function narrowingKeys(
  schema: Schema,
  table: string,
  sql: string,
  params: readonly SqlValue[],
): Array<{ column: string; param: number }> | null {
  const terms = filterTerms(schema, table, sql, params);
  const keys: Array<{ column: string; param: number }> = [];
  for (const term of terms) {
    if (term.kind !== "key") return null;
    keys.push({ column: term.column, param: term.param });
  }
  return keys.length > 0 ? keys : null;
}

/** A term as read, a key term with the position of its parameter. */
type TermAt =
  | (Extract<VisibilityTerm, { kind: "key" }> & { param: number })
  | Exclude<VisibilityTerm, { kind: "key" }>;

function filterTerms(schema: Schema, table: string, sql: string, params: readonly SqlValue[]): TermAt[] {
  const tokens = tokenize(sql);
  // Unreadable SQL, numbered or named parameters, or words whose AND is not a conjunction
  // (BETWEEN ... AND, CASE ... END): the filter is taken whole.
  if (tokens === null) return [wholeTerm(table, sql, params)];
  const placeholders = tokens.filter((t) => t.text === "?").length;
  if (placeholders !== params.length) return [{ table, kind: "any" }];
  if (tokens.some((t) => t.word === "BETWEEN" || t.word === "CASE")) return [wholeTerm(table, sql, params)];
  const body = unwrap(tokens);
  const disjuncts = splitAt(body, "OR").map((disjunct) =>
    disjunct.length === 0 ? [] : splitAt(unwrap(disjunct), "AND"),
  );
  if (
    disjuncts.some(
      (conjuncts) => conjuncts.length === 0 || conjuncts.some((conjunct) => conjunct.length === 0),
    )
  ) {
    return [wholeTerm(table, sql, params)];
  }
  const terms: TermAt[] = [];
  let param = 0;
  for (const conjuncts of disjuncts) {
    let key: { column: string; key: string; param: number } | null = null;
    const rest: string[] = [];
    let bound = false;
    for (const conjunct of conjuncts) {
      const uses = conjunct.filter((t) => t.text === "?").length;
      const found: { column: string; key: string } | null =
        key === null && uses === 1 ? keyConjunct(schema, table, unwrap(conjunct), params[param]!) : null;
      if (found) key = { ...found, param };
      else if (uses === 0) rest.push(`(${text(sql, conjunct)})`);
      else bound = true;
      param += uses;
    }
    const where = rest.join(" AND ");
    if (key) {
      terms.push({
        table,
        kind: "key",
        column: key.column,
        key: key.key,
        where,
        exact: !bound,
        param: key.param,
      });
    } else if (!bound) terms.push({ table, kind: "predicate", where });
    else return [{ table, kind: "any" }];
  }
  return terms;
}

function wholeTerm(table: string, sql: string, params: readonly SqlValue[]): TermAt {
  return params.length === 0 && !/[?:@$]/.test(stripQuoted(sql))
    ? { table, kind: "predicate", where: `(${sql})` }
    : { table, kind: "any" };
}

/** `column = ?` or `? = column` (also `==`, a column maybe quoted or qualified by its table). */
function keyConjunct(
  schema: Schema,
  table: string,
  conjunct: readonly Token[],
  value: SqlValue,
): { column: string; key: string } | null {
  const parts = conjunct.map((t) => t.text);
  let name: string[];
  if (
    parts[parts.length - 1] === "?" &&
    (parts[parts.length - 2] === "=" || parts[parts.length - 2] === "==")
  ) {
    name = parts.slice(0, -2);
  } else if (parts[0] === "?" && (parts[1] === "=" || parts[1] === "==")) {
    name = parts.slice(2);
  } else return null;
  if (name.length === 3 && name[1] === "." && unquote(name[0]!) === table) name = [name[2]!];
  if (name.length !== 1) return null;
  const column = unquote(name[0]!);
  if (column === null) return null;
  const type = columnType(schema, table, column);
  const key = type === null ? null : keyOf(type, value);
  return key === null ? null : { column, key };
}

function unquote(token: string): string | null {
  if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(token)) return token;
  const quoted = /^"((?:[^"]|"")*)"$|^`([^`]*)`$|^\[([^\]]*)\]$/.exec(token);
  if (!quoted) return null;
  return (quoted[1]?.replaceAll('""', '"') ?? quoted[2] ?? quoted[3]) as string;
}

interface Token {
  text: string;
  /** The upper-cased text of a bare word, else "". */
  word: string;
  depth: number;
  start: number;
  end: number;
}

function text(sql: string, tokens: readonly Token[]): string {
  return sql.slice(tokens[0]!.start, tokens[tokens.length - 1]!.end);
}

/** Splits at `word` where it stands at the tokens' own depth (that of their first). */
function splitAt(tokens: readonly Token[], word: string): Token[][] {
  const depth = tokens[0]?.depth ?? 0;
  const parts: Token[][] = [[]];
  for (const token of tokens) {
    if (token.depth === depth && token.word === word) parts.push([]);
    else parts[parts.length - 1]!.push(token);
  }
  return parts;
}

/** The tokens without parentheses that enclose all of them: `((a = ?))` is `a = ?`. */
function unwrap(tokens: readonly Token[]): readonly Token[] {
  let inner = tokens;
  while (inner.length > 2 && inner[0]!.text === "(") {
    const depth = inner[0]!.depth;
    const close = inner.findIndex((t, i) => i > 0 && t.text === ")" && t.depth === depth);
    if (close !== inner.length - 1) break;
    inner = inner.slice(1, -1);
  }
  return inner;
}

function stripQuoted(sql: string): string {
  return sql.replace(/'(?:[^']|'')*'|"(?:[^"]|"")*"|`[^`]*`|\[[^\]]*\]/g, "''");
}

/**
 * SQL's tokens with their parenthesis depth; null for what this reading does not handle
 * (comments, parameters other than `?`, unbalanced parentheses or quotes).
 */
function tokenize(sql: string): Token[] | null {
  const tokens: Token[] = [];
  let depth = 0;
  let i = 0;
  const pattern =
    /\s+|'(?:[^']|'')*'|"(?:[^"]|"")*"|`[^`]*`|\[[^\]]*\]|[A-Za-z_][A-Za-z0-9_$]*|\d+(?:\.\d*)?(?:[eE][+-]?\d+)?|\.\d+|==|!=|<>|<=|>=|\|\||<<|>>|[-+*/%<>=&|~.,;()?]|./gy;
  while (i < sql.length) {
    pattern.lastIndex = i;
    const match = pattern.exec(sql);
    if (!match) return null;
    const token = match[0];
    const start = i;
    i += token.length;
    if (/^\s/.test(token)) continue;
    if (token === "-" && sql[i] === "-") return null;
    if (token === "/" && sql[i] === "*") return null;
    if (token === "?" && /[0-9]/.test(sql[i] ?? "")) return null;
    if (/^[:@$]$/.test(token) || token === ";") return null;
    if (/^['"`[]/.test(token) && token.length < 2) return null;
    if (token === ")") depth--;
    if (depth < 0) return null;
    const word = /^[A-Za-z_]/.test(token) ? token.toUpperCase() : "";
    tokens.push({ text: token, word, depth, start, end: i });
    if (token === "(") depth++;
  }
  return depth === 0 && tokens.length > 0 ? tokens : null;
}
