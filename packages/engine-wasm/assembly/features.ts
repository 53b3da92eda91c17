// What this build of the engine holds. WEIR_QUERIES is a constant of the compiler's (`--use
// WEIR_QUERIES=1` in asconfig.json's full target, 0 in its lean one): where it is 0 the branches
// that reach the query engine are never compiled, so the lean module carries none of it.
import { fail } from "./errors";

/** Whether this build has the query engine (named queries, query-aware pulls). */
export const QUERY_ENGINE: bool = WEIR_QUERIES != 0;

/** What a build without the query engine answers a call that needs it. */
export function noQueryEngine(): string {
  return fail(
    "queries_disabled",
    "this engine is built without the query engine (engine-lean.wasm): load engine.wasm to answer queries",
  );
}
