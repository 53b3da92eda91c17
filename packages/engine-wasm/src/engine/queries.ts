// Named queries outside a pull: a query AST evaluated from scratch, and a group's stored queries.
import { parseQueryAST } from "@weir/protocol";
import { COLUMN_SEPARATOR, ROW_SEPARATOR } from "../abi.js";
import { checkEngineResult, EngineError } from "../engine-error.js";
import { queryPlan } from "../query-plan.js";
import type { HeldRow, SqlAdapter, Visibility } from "../types.js";
import { visibilityText } from "../visibility-text.js";
import type { EngineCore } from "./core.js";

export interface GroupQueries {
  version: string | null;
  queries: { hash: string; name: string; args: unknown }[];
}

export function queryRows(
  core: EngineCore,
  db: SqlAdapter,
  ast: unknown,
  options: { visibility?: Visibility },
): HeldRow[] {
  const schema = core.installedOn(db);
  const parsed = parseQueryAST(ast);
  if (!parsed.ok) throw new EngineError("bad_request", parsed.message);
  const plan = queryPlan(schema, parsed.value);
  const visibility = visibilityText(schema, options.visibility);
  const text = core.call(db, visibility.values, () =>
    checkEngineResult(
      core.wasm.evaluateQuery({ schema: core.handle(schema), plan, visibility: visibility.text }),
    ),
  );
  if (text === "") return [];
  return text.split(ROW_SEPARATOR).map((line) => {
    const first = line.indexOf(COLUMN_SEPARATOR);
    const second = line.indexOf(COLUMN_SEPARATOR, first + 1);
    return {
      node: Number(line.slice(0, first)),
      table: line.slice(first + 1, second),
      key: JSON.parse(line.slice(second + 1)) as unknown[],
    };
  });
}

export function groupQueries(core: EngineCore, db: SqlAdapter, groupID: string): GroupQueries {
  // No group pulled by queries yet.
  if (!core.hasQueryTables(db)) return { version: null, queries: [] };
  return JSON.parse(core.call(db, [], () => checkEngineResult(core.wasm.groupQueries({ groupID }))));
}
