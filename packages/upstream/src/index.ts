export {
  APP_CLIENTS_TABLE,
  applyMutations,
  createMutateServer,
  type MutateServer,
  type MutateServerOptions,
  type MutationContext,
  type SqliteMutator,
} from "./sqlite-mutate.js";
export { type SqliteUpstream, type SqliteUpstreamOptions, sqliteUpstream } from "./sqlite-upstream.js";
export {
  createUpstreamServer,
  type UpstreamOperations,
  type UpstreamServer,
  type UpstreamServerOptions,
} from "./upstream-server.js";
