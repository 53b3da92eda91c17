import { DERIVED_INDEX_PREFIX } from "./abi.js";
import type { SqlAdapter } from "./types.js";

/** An index on one of the app's tables: the app's own, or one the engine derived from a query. */
export interface TableIndex {
  name: string;
  table: string;
  /** The indexed columns as the index's SQL lists them. */
  columns: string;
  /** Derived by the engine from a query's plan when the query was first put. */
  derived: boolean;
}

/** The indexes on the app's tables (not the engine's own tables'), by table and name. */
export function tableIndexes(db: SqlAdapter): TableIndex[] {
  const rows = db.query(
    "SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL " +
      "AND tbl_name NOT LIKE '\\_weir%' ESCAPE '\\' AND tbl_name NOT LIKE 'sqlite\\_%' ESCAPE '\\' " +
      "ORDER BY tbl_name, name",
    [],
  );
  return rows.map(([name, table, sql]) => {
    const text = String(sql);
    const open = text.indexOf("(", text.toUpperCase().lastIndexOf(" ON "));
    return {
      name: String(name),
      table: String(table),
      columns: text.slice(open + 1, text.lastIndexOf(")")),
      derived: String(name).startsWith(DERIVED_INDEX_PREFIX),
    };
  });
}
