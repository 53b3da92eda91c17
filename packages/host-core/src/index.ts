export { isValidNamespace, NAMESPACE_PATTERN } from "@weir/protocol";
export { AudienceIndex } from "./audience/audience-index.js";
export { type Subscription, subscriptionFor } from "./audience/subscription.js";
export { EVERYONE, type WakeAudience } from "./audience/wake-audience.js";
export { authenticateRequest, authorizeNamespace } from "./auth/authenticate-request.js";
export { checkAdmin } from "./auth/check-admin.js";
export { checkNotify } from "./auth/check-notify.js";
export { type Claims, isUserID } from "./auth/claims.js";
export { CONFIG_DEFAULTS } from "./config/config-defaults.js";
export { ConfigError } from "./config/config-error.js";
export {
  DEFAULT_WEIGHTS,
  QUOTA_DEFAULTS,
  type QuotaConfig,
  type RequestWeights,
  type ResolvedQuotas,
} from "./config/quota-config.js";
export { resolveConfig } from "./config/resolve-config.js";
export type { QueryDefinition, ResolvedConfig, WeirConfig } from "./config/weir-config.js";
export type { Counters } from "./flows/counters.js";
export { FaultError } from "./flows/fault.js";
export type { FlowResult } from "./flows/flow-context.js";
export type { Knobs } from "./flows/knobs.js";
export type { HostPorts } from "./host/host-ports.js";
export { InFlight } from "./host/in-flight.js";
export { createWeirHost, WeirHost } from "./host/weir-host.js";
export { HttpError } from "./http/http-error.js";
export {
  type AuthRequest,
  jsonParts,
  partsFromRequest,
  type RequestParts,
  type ResponseParts,
  toResponse,
} from "./http/http-parts.js";
export {
  errorDetail,
  INTERNAL_ERROR_MESSAGE,
  internalErrorBody,
  newRequestId,
} from "./http/internal-error.js";
export { errorResponse, jsonResponse } from "./http/json-response.js";
export { tooLarge } from "./http/read-json-body.js";
export {
  namespaceHash,
  type RequestKind,
  type RequestRecord,
  type ResultClass,
} from "./http/request-record.js";
export { matchRoute, type Route, type SyncKind } from "./http/route.js";
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
export { IngestStoppedError } from "./ingest/ingest-stopped-error.js";
export type { IngestEvent } from "./ingest/namespace-ingest.js";
export {
  assertIngestNotStopped,
  type IngestRecord,
  ingestRecord,
  runRecordedIngestPass,
  storedBreaker,
} from "./ingest/recorded-ingest-pass.js";
export { type ResolvedUpstream, UPSTREAM_DEFAULTS, type UpstreamConfig } from "./ingest/upstream-config.js";
export type { Mutator, MutatorContext, MutatorTx, Row, RowKey } from "./mutators/mutator.js";
export { MutatorError } from "./mutators/mutator-error.js";
export { CONTROL_TABLE, ControlStore } from "./namespace/control-store.js";
export { type CounterFlushPolicy, DEFAULT_COUNTER_FLUSH } from "./namespace/counter-flush.js";
export type { AcquireContext, Unavailable } from "./namespace/namespace-registry.js";
export type { NamespaceService } from "./namespace/namespace-service.js";
export {
  NamespaceUnavailableError,
  type UnavailableReason,
} from "./namespace/namespace-unavailable-error.js";
export { type StorageFailure, storageFailure } from "./namespace/storage-failure.js";
export { type Clock, systemClock } from "./ports/clock.js";
export { consoleJsonLogger, type Logger, type LogLevel, logLine } from "./ports/logger.js";
export { memoryQuotaStore, type QuotaCount, type QuotaSpend, type QuotaStore } from "./ports/quota-store.js";
export type { Scheduler } from "./ports/scheduler.js";
export type { NamespaceStore, OpenContext, Storage, StoreCloseOutcome } from "./ports/storage.js";
export { TimerScheduler } from "./ports/timer-scheduler.js";
export type { Wake, WakeTarget } from "./ports/wake.js";
export {
  CLOSE_TOO_FAST,
  type Pace,
  TOO_FAST_REASON,
  TokenBucket,
  userPace,
  WAKE_PACE,
  ZERO_PACE,
} from "./sockets/socket-pace.js";
export {
  DEFAULT_MAX_SOCKETS_PER_USER,
  DEFAULT_USER_MESSAGES_PER_SECOND,
  TooManySockets,
  type UserSocketOptions,
  userSocketProblems,
} from "./sockets/user-socket-limits.js";
export { refusedZeroUpgrade } from "./zero/zero-accept.js";
export {
  parseZeroConnect,
  type ZeroConnectRequest,
} from "./zero/zero-connect-request.js";
export type { ZeroConnection } from "./zero/zero-connection.js";
export type { ZeroConnectionState } from "./zero/zero-connection-state.js";
export { formatZeroCookie, parseZeroCookie, type ZeroCookie } from "./zero/zero-cookie.js";
export { ZeroError, type ZeroErrorKind } from "./zero/zero-error.js";
export type { ZeroHub } from "./zero/zero-hub.js";
export { zeroRefusal } from "./zero/zero-refusal.js";
export { CLOSE_NORMAL, CLOSE_PROTOCOL_ERROR, type ZeroSocket } from "./zero/zero-socket.js";
export type { ZeroSocketHandler, ZeroUpgrade } from "./zero/zero-upgrade.js";
