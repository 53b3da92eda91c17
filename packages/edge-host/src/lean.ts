// `@weir/edge-host/lean`: the same API, for a Worker whose config names no queries; it ships
// and loads the lean engine only (see create-lean-sync-durable-object.ts).
export { createSyncDurableObject } from "./create-lean-sync-durable-object.js";
export * from "./shared-exports.js";
