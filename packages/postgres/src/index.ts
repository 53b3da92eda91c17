export type { WeirColumnType } from "./column-codec.js";
export {
  createUpstreamServer,
  type UpstreamServer,
  type UpstreamServerOptions,
} from "./create-upstream-server.js";
export { type DropReplicationOptions, dropReplication } from "./drop-replication.js";
export {
  type HttpNotifier,
  type HttpNotifierOptions,
  httpNotifier,
  type NotifierStats,
} from "./http-notifier.js";
export { formatLsn, parseLsn } from "./lsn.js";
export {
  MAX_LIMIT,
  type PostgresUpstream,
  postgresUpstream,
  type UpstreamSchema,
} from "./postgres-upstream.js";
export type { ReaderState } from "./replication-reader.js";
export { FIRST_RETRY_MS, MAX_RETRY_MS, retryDelay } from "./retry-delay.js";
export type { SchemaDrift } from "./schema-drift.js";
export { UpstreamError } from "./upstream-error.js";
export { UpstreamGoneError } from "./upstream-gone-error.js";
export { DEFAULT_RETENTION, PostgresUpstreamOptions } from "./upstream-options.js";
export type {
  ChangesPage,
  SnapshotPage,
  UpstreamChange,
  UpstreamOp,
  UpstreamSource,
} from "./upstream-source.js";
export type { UpstreamStatus } from "./upstream-status.js";
export { encodeWatermark } from "./watermark.js";
