export type { WeirColumnType } from "./column-codec.js";
export { type DropReplicationOptions, dropReplication } from "./drop-replication.js";
export {
  type HttpNotifier,
  type HttpNotifierOptions,
  httpNotifier,
  type NotifierStats,
} from "./http-notifier.js";
export { type ListColumnsOptions, type ListedColumn, listColumns } from "./list-columns.js";
export { formatLsn, parseLsn } from "./lsn.js";
export {
  type PostgresUpstream,
  postgresUpstream,
  type UpstreamSchema,
} from "./postgres-upstream.js";
export {
  createPushProcessor,
  type PostgresMutator,
  type PushContext,
  type PushProcessor,
  type PushProcessorOptions,
} from "./push-processor.js";
export type { ReaderState } from "./replication-reader.js";
export type { SchemaDrift } from "./schema-drift.js";
export { serveUpstream } from "./serve-upstream.js";
export { DEFAULT_RETENTION, PostgresUpstreamOptions } from "./upstream-options.js";
export { type PortUpstream, upstreamOverPort } from "./upstream-port.js";
export type { UpstreamStatus } from "./upstream-status.js";
