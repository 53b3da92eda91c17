// The only way the engine reaches the world: a synchronous SQL adapter supplied by the host.
// Results come back as text: rows separated by "\n", columns by "\t", NULL as an empty field.
// Every column the engine selects is an integer or JSON text (which never holds a raw tab or
// newline), so the separators cannot be confused with data.
// Parameters go as a JSON array; an element `{"$":k}` stands for the caller's k-th extra
// parameter (a visibility filter's values, which may be bigints or bytes).

@external("host", "query")
declare function hostQuery(sql: string, params: string): string;

@external("host", "exec")
declare function hostExec(sql: string, params: string): i32;

export const ROW_SEPARATOR = "\n";
export const COLUMN_SEPARATOR = "\t";
export const NO_PARAMS = "[]";

export function query(sql: string, params: string = NO_PARAMS): string {
  return hostQuery(sql, params);
}

export function exec(sql: string, params: string = NO_PARAMS): i32 {
  return hostExec(sql, params);
}

/** The first column of the first row, or "" when there is no row. */
export function queryScalar(sql: string, params: string = NO_PARAMS): string {
  const text = hostQuery(sql, params);
  let end = text.indexOf(ROW_SEPARATOR);
  if (end < 0) end = text.length;
  const tab = text.indexOf(COLUMN_SEPARATOR);
  if (tab >= 0 && tab < end) end = tab;
  return text.substring(0, end);
}

/** Rows of a result, each split into its columns. For small results only. */
export function queryRows(sql: string, params: string = NO_PARAMS): Array<Array<string>> {
  const text = hostQuery(sql, params);
  const rows: Array<string>[] = [];
  if (text.length == 0) return rows;
  const lines = text.split(ROW_SEPARATOR);
  for (let i = 0; i < lines.length; i++) rows.push(lines[i].split(COLUMN_SEPARATOR));
  return rows;
}
