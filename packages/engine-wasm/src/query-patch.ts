import { parseQueryAST } from "@weir/protocol";
import {
  COLUMN_SEPARATOR,
  QUERY_OP_CLEAR,
  QUERY_OP_DEL,
  QUERY_OP_PUT,
  QUERY_OP_VERSION,
  ROW_SEPARATOR,
} from "./abi.js";
import { EngineError } from "./engine-error.js";
import { writtenPlan } from "./query-plan.js";
import type { QueryPatchOp, Schema, SqlValue } from "./types.js";

/**
 * A query patch in the engine's form (src/abi.ts): a line per operation, its hash, name and
 * args as extra parameters after the visibility's (`offset` of them), each put's AST checked
 * and written as its plan, which goes as an extra parameter too, with the tables it reads: the
 * engine stores them as they are and reads a plan back only to evaluate it. A put whose AST the
 * engine cannot answer is a `bad_request` naming the query and the part.
 */
export function queryPatchText(
  schema: Schema,
  patch: readonly QueryPatchOp[],
  offset: number,
  transformVersion?: string,
): { text: string; values: SqlValue[] } {
  const values: SqlValue[] = [];
  const param = (value: SqlValue) => String(offset + values.push(value) - 1);
  const lines = patch.map((op) => {
    if (op.op === "clear") return QUERY_OP_CLEAR;
    if (op.op === "del") return [QUERY_OP_DEL, param(op.hash)].join(COLUMN_SEPARATOR);
    const parsed = parseQueryAST(op.ast);
    if (!parsed.ok) throw new EngineError("bad_request", `query ${op.name}: ${parsed.message}`);
    let plan: { plan: string; tables: string };
    try {
      plan = writtenPlan(schema, parsed.value);
    } catch (error) {
      if (error instanceof EngineError)
        throw new EngineError(error.code, `query ${op.name}: ${error.message}`);
      throw error;
    }
    const args = JSON.stringify(op.args ?? null);
    return [
      QUERY_OP_PUT,
      param(op.hash),
      param(op.name),
      param(args),
      param(plan.plan),
      param(plan.tables),
    ].join(COLUMN_SEPARATOR);
  });
  if (transformVersion !== undefined)
    lines.unshift([QUERY_OP_VERSION, param(transformVersion)].join(COLUMN_SEPARATOR));
  return { text: lines.join(ROW_SEPARATOR), values };
}
