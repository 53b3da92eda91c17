// The named queries an install indexes ahead of any put (see assembly/query/indexes.ts): each
// AST checked and written as its plan, the name and plan going as extra parameters.
import { parseQueryAST } from "@weir/protocol";
import { COLUMN_SEPARATOR, ROW_SEPARATOR } from "../abi.js";
import { EngineError } from "../engine-error.js";
import { writtenPlan } from "../query-plan.js";
import type { NamedQueryShape, Schema, SqlValue } from "../types.js";

/**
 * The install's `queries` text and its extra parameters, and the queries left out: those whose
 * AST the engine cannot answer, with why (their indexes wait for a put of an answerable shape).
 */
export function namedQueryPlans(
  schema: Schema,
  queries: readonly NamedQueryShape[],
): { text: string; values: SqlValue[]; unindexed: { name: string; message: string }[] } {
  const values: SqlValue[] = [];
  const lines: string[] = [];
  const unindexed: { name: string; message: string }[] = [];
  for (const { name, ast } of queries) {
    const parsed = parseQueryAST(ast);
    if (!parsed.ok) {
      unindexed.push({ name, message: parsed.message });
      continue;
    }
    let plan: string;
    try {
      plan = writtenPlan(schema, parsed.value).plan;
    } catch (error) {
      if (!(error instanceof EngineError)) throw error;
      unindexed.push({ name, message: error.message });
      continue;
    }
    lines.push([values.push(name) - 1, values.push(plan) - 1].join(COLUMN_SEPARATOR));
  }
  return { text: lines.join(ROW_SEPARATOR), values, unindexed };
}
