// Pieces of a query's SQL that depend on a node alone: its ordering, its key, its correlation.

import { Table } from "../schema";
import { ident } from "../text";
import { Correlation, QueryNode } from "./plan";

/** The node's limit as an integer literal (a plan's limit is a non-negative safe integer). */
export function limitValue(node: QueryNode): string {
  return I64.parseInt(node.limit, 10).toString();
}

export function correlated(correlation: Correlation, parentAlias: string, childAlias: string): string {
  const parts: string[] = [];
  for (let i = 0; i < correlation.child.length; i++) {
    parts.push(
      childAlias +
        "." +
        ident(correlation.child[i].substring(1)) +
        " = " +
        parentAlias +
        "." +
        ident(correlation.parent[i].substring(1)),
    );
  }
  return parts.join(" AND ");
}

export function columnList(columns: Array<string>, alias: string): string {
  const parts: string[] = [];
  for (let i = 0; i < columns.length; i++) parts.push(alias + "." + ident(columns[i].substring(1)));
  return parts.join(", ");
}

/** The node's order, or the reverse of it (`reverse`). */
export function ordering(node: QueryNode, alias: string, reverse: bool = false): string {
  const parts: string[] = [];
  for (let i = 0; i < node.orderColumns.length; i++) {
    parts.push(
      alias +
        "." +
        ident(node.orderColumns[i].substring(1)) +
        (node.orderDescending[i] != reverse ? " DESC" : " ASC"),
    );
  }
  return parts.join(", ");
}

/** The key as the change log writes it (a JSON array of the primary key's values). */
export function keyArray(table: Table, alias: string): string {
  const parts: string[] = [];
  for (let i = 0; i < table.primaryKey.length; i++) parts.push(alias + "." + ident(table.primaryKey[i].name));
  return "json_array(" + parts.join(", ") + ")";
}
