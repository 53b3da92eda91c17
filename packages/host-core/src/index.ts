export { authorizeNamespace } from "./authenticate-request.js";
export { checkAdmin } from "./check-admin.js";
export type { Claims } from "./claims.js";
export {
  CONFIG_DEFAULTS,
  ConfigError,
  type ResolvedConfig,
  resolveConfig,
  type WeirConfig,
} from "./config.js";
export { CONTROL_TABLE, type Knobs } from "./control-store.js";
export type { Counters } from "./counters.js";
export { FaultError } from "./fault.js";
export { HttpError } from "./http-error.js";
export {
  type AuthRequest,
  jsonParts,
  partsFromRequest,
  type RequestParts,
  type ResponseParts,
  toResponse,
} from "./http-parts.js";
export { type HttpUpstreamOptions, httpUpstream, type UpstreamFetch } from "./ingest/http-upstream.js";
export {
  type BreakerLimits,
  BreakerOpenError,
  type BreakerReason,
  type BreakerState,
  closedBreaker,
  DEFAULT_BREAKER_LIMITS,
  IngestBreaker,
} from "./ingest/ingest-breaker.js";
export {
  type IngestBudget,
  type IngestOutcome,
  type IngestPassInput,
  type IngestPassResult,
  type IngestProgress,
  runIngestPass,
} from "./ingest/ingest-pass.js";
export { parseRetryAfter, retryDelayMs } from "./ingest/retry-delay.js";
export { errorDetail, INTERNAL_ERROR_MESSAGE, internalErrorBody, newRequestId } from "./internal-error.js";
export { errorResponse, jsonResponse } from "./json-response.js";
export type { Mutator, MutatorContext, MutatorTx, Row, RowKey } from "./mutator.js";
export { MutatorError } from "./mutator-error.js";
export { isValidNamespace, NAMESPACE_PATTERN } from "./namespace.js";
export type { AcquireContext, Unavailable } from "./namespace-registry.js";
export type { FlowResult, NamespaceService } from "./namespace-service.js";
export { NamespaceUnavailableError, type UnavailableReason } from "./namespace-unavailable-error.js";
export { type Clock, systemClock } from "./ports/clock.js";
export { consoleJsonLogger, type Logger, type LogLevel, logLine } from "./ports/logger.js";
export { memoryQuotaStore, type QuotaCount, type QuotaSpend, type QuotaStore } from "./ports/quota-store.js";
export type { Scheduler } from "./ports/scheduler.js";
export type { NamespaceStore, OpenContext, Storage, StoreCloseOutcome } from "./ports/storage.js";
export {
  UpstreamCallError,
  type UpstreamChangesPage,
  UpstreamGoneError,
  type UpstreamSnapshotPage,
  type UpstreamSource,
} from "./ports/upstream-source.js";
export type { Wake, WakeTarget } from "./ports/wake.js";
export {
  DEFAULT_WEIGHTS,
  QUOTA_DEFAULTS,
  type QuotaConfig,
  type RequestWeights,
  type ResolvedQuotas,
} from "./quota-config.js";
export { tooLarge } from "./read-json-body.js";
export { namespaceHash, type RequestKind, type RequestRecord, type ResultClass } from "./request-record.js";
export { matchRoute, type Route, type SyncKind } from "./route.js";
export { safeEqual } from "./safe-equal.js";
export { type StorageFailure, storageFailure } from "./storage-failure.js";
export { TimerScheduler } from "./timer-scheduler.js";
export { createWeirHost, type HostPorts, WeirHost } from "./weir-host.js";
