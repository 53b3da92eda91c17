// A reset pull: every row the caller may see, after a clear.
import { ROWS_AFTER_OP_HERE } from "../src/abi";
import { queryJoinedPayloads } from "./host";
import { putOp } from "./projection";
import { PullPlan } from "./pull-plan";
import { Schema } from "./schema";
import { ident, params } from "./text";
import { Visibility } from "./visibility";

function fullResetSql(schema: Schema, visibility: Visibility, format: i32, bound: Array<string>): string {
  const parts: string[] = [];
  for (let i = 0; i < schema.tables.length; i++) {
    const table = schema.tables[i];
    const filter = visibility.filterFor(table.name);
    parts.push(
      "SELECT " +
        putOp(table, format) +
        " AS patch FROM " +
        ident(table.name) +
        " WHERE " +
        filter.condition(),
    );
    filter.addParams(bound);
  }
  return parts.join(" UNION ALL ");
}

export function planReset(
  schema: Schema,
  visibility: Visibility,
  format: i32,
  watermark: i64,
  plan: PullPlan,
): void {
  const bound: string[] = [];
  const sql = fullResetSql(schema, visibility, format, bound);
  plan.reset = true;
  plan.cookie = watermark;
  plan.included =
    schema.tables.length == 0
      ? 0
      : // count(*), not count(patch): SQLite flattens the subquery into both aggregates, and
        // each would render every row's JSON (a patch is never NULL).
        queryJoinedPayloads("SELECT count(*), group_concat(patch, ',') FROM (" + sql + ")", params(bound));
  plan.patch = '{"op":"clear"}' + ROWS_AFTER_OP_HERE;
}
