export type { AudienceProbe, ChangeAudience } from "./change-audience.js";
export {
  DEFAULT_MAX_CHANGE_BYTES,
  DEFAULT_MAX_CHANGE_ROWS,
  DEFAULT_MAX_QUERY_ROWS,
  DEFAULT_MEMORY_CEILING_BYTES,
  DEFAULT_PRUNE_LIMIT,
  Engine,
  type EngineOptions,
  loadEngine,
} from "./engine.js";
export { EngineError, isWorkRefusal } from "./engine-error.js";
export { EngineFailure } from "./engine-module.js";
export { engineWasmUrl, leanEngineWasmUrl } from "./engine-wasm-url.js";
export { checkPatchCaps } from "./group-caps.js";
export { QueryPages, type QueryPagesOptions, QueryPageTurn } from "./query-pages.js";
export { RangeSizes } from "./range-sizes.js";
export { schemaProblems, schemaText } from "./schema-text.js";
export { parseSchemaText, storedSchema } from "./stored-schema.js";
export { type TableIndex, tableIndexes } from "./table-indexes.js";
export type * from "./types.js";
export {
  type QuarantinedRow,
  type ReducedBatch,
  reduceUpstreamBatch,
  type StoredValue,
  schemaDrift,
  snapshotRows,
  type TableWrites,
  type UpstreamRowChange,
} from "./upstream-batch.js";
export { columnType, keyOf, type VisibilityTerm, visibilityTerms } from "./visibility-terms.js";
export { pullVisibilityIdentity } from "./visibility-text.js";
