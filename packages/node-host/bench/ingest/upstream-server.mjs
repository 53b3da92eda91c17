// The shipped upstream server (@weir/upstream) on a SQLite file, in a process of its own:
// `node upstream-server.mjs <file>`. The benchmark writes the file from its own connection.
import { createUpstreamServer, sqliteUpstream } from "@weir/upstream";
import { announce, SCHEMA, UPSTREAM_TOKEN } from "./schema.mjs";

const source = sqliteUpstream({ file: process.argv[2], schema: SCHEMA });
const server = createUpstreamServer({ source, token: UPSTREAM_TOKEN });
const { url } = await server.listen({ port: 0 });
announce(url);
process.on("SIGTERM", () => server.close().then(() => process.exit(0)));
