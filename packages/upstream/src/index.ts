export { type SqliteUpstream, type SqliteUpstreamOptions, sqliteUpstream } from "./sqlite-upstream.js";
export {
  createUpstreamServer,
  type UpstreamOperations,
  type UpstreamServer,
  type UpstreamServerOptions,
} from "./upstream-server.js";
