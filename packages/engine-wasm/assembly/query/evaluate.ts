// Evaluating a query plan: the rows it holds, from scratch.
import { query } from "../host";
import { Schema } from "../schema";
import { params } from "../text";
import { parseVisibility } from "../visibility";
import { readPlan } from "./plan";
import { querySql } from "./sql";

/** "<node>\t<table>\t<key>" lines (see QuerySql.statement): the rows the plan holds for a caller of `visibilityText`, the root's in order. */
export function evaluateQuery(schema: Schema, plan: string, visibilityText: string): string {
  const sql = querySql(readPlan(plan, schema), parseVisibility(visibilityText));
  return query(sql.statement(), params(sql.params));
}
