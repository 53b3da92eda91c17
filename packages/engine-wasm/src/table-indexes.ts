import { DERIVED_INDEX_PREFIX } from "./abi.js";
import type { SqlAdapter } from "./types.js";

/** An index on one of the app's tables: the app's own, or one the engine derived from a query. */
export interface TableIndex {
  name: string;
  table: string;
  /** The indexed columns as the index's SQL lists them. */
  columns: string;
  /** Derived by the engine from a query's plan, at install or when the query was first put. */
  derived: boolean;
  /** The named query that asked for a derived index first (null: the app's, or unnamed). */
  query: string | null;
}

/** How a derived index's SQL ends: a comment naming its query as JSON (`/` escaped). */
const QUERY_COMMENT = " /* query ";

/** The indexes on the app's tables (not the engine's own tables'), by table and name. */
export function tableIndexes(db: SqlAdapter): TableIndex[] {
  const rows = db.query(
    "SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL " +
      "AND tbl_name NOT LIKE '\\_weir%' ESCAPE '\\' AND tbl_name NOT LIKE 'sqlite\\_%' ESCAPE '\\' " +
      "ORDER BY tbl_name, name",
    [],
  );
  return rows.map(([name, table, sql]) => {
    const derived = String(name).startsWith(DERIVED_INDEX_PREFIX);
    let text = String(sql);
    let query: string | null = null;
    const comment = derived ? text.lastIndexOf(QUERY_COMMENT) : -1;
    if (comment >= 0 && text.endsWith(" */")) {
      query = JSON.parse(text.slice(comment + QUERY_COMMENT.length, -3)) as string;
      text = text.slice(0, comment);
    }
    const open = text.indexOf("(", text.toUpperCase().lastIndexOf(" ON "));
    return {
      name: String(name),
      table: String(table),
      columns: text.slice(open + 1, text.lastIndexOf(")")),
      derived,
      query,
    };
  });
}
