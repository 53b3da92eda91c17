export {
  createMutateEndpoint,
  DEFAULT_MUTATE_BODY_BYTES,
  type MutateEndpoint,
  type MutateEndpointAnswer,
  type MutateEndpointOptions,
} from "./mutate/mutate-endpoint.js";
export type { MutateLedger, Mutation, MutationContext, MutationOutcome } from "./mutate/mutate-ledger.js";
export { mutatorNamed, processMutations } from "./mutate/process-mutations.js";
export {
  APP_CLIENTS_TABLE,
  applyMutations,
  createMutateServer,
  type MutateServer,
  type MutateServerOptions,
  type SqliteMutator,
} from "./mutate/sqlite-mutate.js";
export { type SqliteUpstream, type SqliteUpstreamOptions, sqliteUpstream } from "./sqlite-upstream.js";
export {
  createUpstreamServer,
  type UpstreamOperations,
  type UpstreamServer,
  type UpstreamServerOptions,
} from "./upstream-server.js";
