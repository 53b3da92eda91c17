// A client group's stored queries, as its query-aware pulls read them back: each one's hash (as
// a JSON parameter), its plan and the tables the plan reads (",a,b,").
import { queryRows } from "../host";
import { params } from "../text";
import { RangeState, rangeState } from "./ranges";

export class StoredQuery {
  constructor(
    public hash: string,
    public plan: string,
    public tables: string,
    /** A deferred query that keeps the rows no write changed, or its ranges' (deferred.ts). */
    public keeps: bool = false,
    /** A deferred query's ranges so far (ranges.ts). */
    public range: RangeState = new RangeState(),
  ) {}

  /** Whether the query reads any of `tables`. */
  readsAny(tables: Array<string>): bool {
    for (let i = 0; i < tables.length; i++) {
      if (this.tables.includes("," + tables[i] + ",")) return true;
    }
    return false;
  }
}

/** The group's queries (`group`: its id as a JSON parameter), in hash order. */
export function storedQueries(group: string): Array<StoredQuery> {
  const rows = queryRows(
    "SELECT json_quote(hash), plan, tables FROM _weir_queries WHERE group_id = ? ORDER BY hash",
    params([group]),
  );
  return storedRows(rows);
}

/** Queries read as (hash, plan, tables[, keeps, after, held, spent]) rows. */
export function storedRows(rows: Array<Array<string>>): Array<StoredQuery> {
  const queries: StoredQuery[] = [];
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i];
    const range = row.length > 6 ? rangeState(row[4], row[5], row[6]) : new RangeState();
    queries.push(new StoredQuery(row[0], row[1], row[2], row.length > 3 && row[3] == "1", range));
  }
  return queries;
}
