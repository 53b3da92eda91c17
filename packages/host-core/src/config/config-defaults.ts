import { DEFAULT_MAX_CHANGE_BYTES, DEFAULT_MAX_CHANGE_ROWS, DEFAULT_MAX_QUERY_ROWS } from "@weir/engine-wasm";

/** What a config leaves out. The pull caps are the engine's own defaults. */
export const CONFIG_DEFAULTS = {
  maxChangeRows: DEFAULT_MAX_CHANGE_ROWS,
  maxChangeBytes: DEFAULT_MAX_CHANGE_BYTES,
  retainChanges: 100_000,
  wakeWindowMs: 20,
  maxBodyBytes: 4 * 1024 * 1024,
  maxOpenNamespaces: 1_000,
  maxQueryRows: DEFAULT_MAX_QUERY_ROWS,
  queryBudgetMs: 50,
  queryTotalBudgetMs: 500,
  // Below the Node host's 50 ms step budget by the work an answer does after its paced steps.
  queryAnswerMs: 30,
  querySliceMs: 5,
  queryPageMs: 5,
  pushSliceMs: 10,
  maxGroupQueries: 1_000,
  maxGroupQueryBytes: 1024 * 1024,
} as const;
