import type { TablePlan } from "./read-tables.js";

/** A difference between a table upstream and what weir read of it at start. */
export interface SchemaDrift {
  table: string;
  column: string | null;
  /**
   * `added`: a column added to a table whose every column is sent (the upstream follows it
   * without a restart, see `ReplicationReader`); the others stop the reader.
   */
  kind: "unconfigured" | "dropped" | "retyped" | "added";
  message: string;
}

/** The parts of a pgoutput Relation message that drift is judged on. */
export interface RelationShape {
  name: string;
  columns: { name: string; typeOid: number }[];
}

/**
 * Compares a Relation message (pgoutput sends one before a table's first change on a connection
 * and again after its definition changes) with the table's plan. A sent column that is gone or
 * has another type, a column added to a table whose every column is sent, or a table that is
 * published but not configured would be misread: the reader stops there, before buffering the
 * transaction, and reports the drift.
 */
export function schemaDrift(relation: RelationShape, plan: TablePlan | undefined): SchemaDrift | null {
  const table = relation.name;
  if (!plan) {
    return {
      table,
      column: null,
      kind: "unconfigured",
      message: `table ${table} is in the publication but not configured: add it to tables, or remove it from the publication`,
    };
  }
  const upstream = new Map(relation.columns.map((column) => [column.name, column.typeOid]));
  for (const column of plan.columns) {
    const typeOid = upstream.get(column.name);
    if (typeOid === undefined) {
      return {
        table,
        column: column.name,
        kind: "dropped",
        message: `column ${table}.${column.name} was dropped or renamed upstream`,
      };
    }
    if (typeOid !== column.typeOid) {
      return {
        table,
        column: column.name,
        kind: "retyped",
        message: `column ${table}.${column.name} changed type upstream (it was ${column.typeName})`,
      };
    }
  }
  if (plan.allColumns) {
    for (const column of relation.columns) {
      if (!plan.tableColumns.has(column.name)) {
        return {
          table,
          column: column.name,
          kind: "added",
          message: `column ${table}.${column.name} was added upstream`,
        };
      }
    }
  }
  return null;
}
