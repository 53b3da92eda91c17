// The only way the engine reaches the world: a synchronous SQL adapter supplied by the host.
// Statements are registered once (`prepare`) and then named by number, so a hot call does not
// copy its SQL across the boundary. Results come back as text: rows separated by "\n", columns
// by "\t", NULL as an empty field; every column the engine reads is an integer or JSON text
// (which never holds a raw tab or newline), so the separators cannot be confused with data.
// Parameters go as a JSON array; an element `{"$":k}` stands for the caller's k-th extra
// parameter (a visibility filter's values, which may be bigints or bytes).
// Row payloads (the JSON of each row a pull sends) never enter the engine: `queryPayload`
// leaves each row's last column with the host and answers only the columns before it, and
// `queryJoinedPayloads` runs a query answering one row, a count and the payloads joined by
// commas (SQLite's group_concat builds one string, far cheaper than a string per row), keeps
// the text with the host and answers the count. The engine then says how many payloads the
// answer includes.

@external("host", "prepare")
declare function hostPrepare(sql: string): i32;

@external("host", "query")
declare function hostQuery(statement: i32, params: string): string;

@external("host", "queryPayload")
declare function hostQueryPayload(statement: i32, params: string): string;

@external("host", "queryJoinedPayloads")
declare function hostQueryJoinedPayloads(statement: i32, params: string): i32;

@external("host", "exec")
declare function hostExec(statement: i32, params: string): i32;

import { COLUMN_SEPARATOR, ROW_SEPARATOR } from "../src/abi";

export { COLUMN_SEPARATOR, ROW_SEPARATOR };
export const NO_PARAMS = "[]";

/** A statement whose SQL never changes: registered on first use, then named by its number alone. */
export class Statement {
  private id: i32 = -1;

  constructor(public sql: string) {}

  get number(): i32 {
    if (this.id < 0) this.id = hostPrepare(this.sql);
    return this.id;
  }
}

const statements = new Map<string, i32>();

/** The number of a statement built at run time (pull queries), registered once per distinct text. */
function statement(sql: string): i32 {
  if (statements.has(sql)) return statements.get(sql);
  const id = hostPrepare(sql);
  statements.set(sql, id);
  return id;
}

export function queryStatement(prepared: Statement, params: string = NO_PARAMS): string {
  return hostQuery(prepared.number, params);
}

export function execStatement(prepared: Statement, params: string = NO_PARAMS): i32 {
  return hostExec(prepared.number, params);
}

export function query(sql: string, params: string = NO_PARAMS): string {
  return hostQuery(statement(sql), params);
}

/** `queryPayload` of a registered statement. */
export function queryPayloadStatement(prepared: Statement, params: string = NO_PARAMS): string {
  return hostQueryPayload(prepared.number, params);
}

/** `queryJoinedPayloads` of a registered statement. */
export function queryJoinedStatement(prepared: Statement, params: string = NO_PARAMS): i32 {
  return hostQueryJoinedPayloads(prepared.number, params);
}

/** Runs a query whose last column is a row payload; see above. */
export function queryPayload(sql: string, params: string = NO_PARAMS): string {
  return hostQueryPayload(statement(sql), params);
}

/** Runs a query answering (count, payloads joined by commas); see above. */
export function queryJoinedPayloads(sql: string, params: string = NO_PARAMS): i32 {
  return hostQueryJoinedPayloads(statement(sql), params);
}

export function exec(sql: string, params: string = NO_PARAMS): i32 {
  return hostExec(statement(sql), params);
}

/** Rows of a result, each split into its columns. For small results only. */
export function queryRows(sql: string, params: string = NO_PARAMS): Array<Array<string>> {
  const text = query(sql, params);
  const rows = new Array<Array<string>>();
  if (text.length == 0) return rows;
  const lines = text.split(ROW_SEPARATOR);
  for (let i = 0; i < lines.length; i++) rows.push(lines[i].split(COLUMN_SEPARATOR));
  return rows;
}
