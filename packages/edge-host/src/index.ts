export { createSyncDurableObject } from "./create-sync-durable-object.js";
export * from "./shared-exports.js";
