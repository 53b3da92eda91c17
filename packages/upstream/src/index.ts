export { type SqliteUpstream, type SqliteUpstreamOptions, sqliteUpstream } from "./sqlite-upstream.js";
export { createUpstreamServer, type UpstreamServer, type UpstreamServerOptions } from "./upstream-server.js";
export { watermarkJson } from "./watermark-json.js";
