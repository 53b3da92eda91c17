// What both entries export, `@weir/edge-host` and `@weir/edge-host/lean`; each adds its own
// `createSyncDurableObject`, which decides the engine builds its Worker ships.
export type { Claims, Mutator, MutatorContext, MutatorTx, WeirConfig } from "@weir/host-core";
export {
  type HttpUpstreamOptions,
  httpUpstream,
  MutatorError,
  type UpstreamConfig,
  type UpstreamFetch,
} from "@weir/host-core";
export { createSyncWorker, DEFAULT_BINDING, type SyncWorker } from "./create-sync-worker.js";
export type { AlarmContext, AlarmTask, EdgeConfig, EdgeConfigSource } from "./edge-config.js";
export { FORWARDED_HEADER } from "./forwarded-request.js";
export { sqlStorageAdapter } from "./sql-storage-adapter.js";
export { durableObjectStore } from "./storage.js";
export type { SyncDurableObject, SyncDurableObjectClass } from "./sync-object-class.js";
