// weir's Node host on file storage, replicating the upstream over HTTP, in a process of its own:
// `node weir-server.mjs <data-dir> <upstream-url>`. Ingest runs when asked (admin ingest,
// notify): polls are a minute apart, so they do not run into the measured passes.
import { httpUpstream } from "@weir/host-core";
import { createServer } from "../../dist/index.js";
import { ADMIN_KEY, announce, NOTIFY_TOKEN, SCHEMA, UPSTREAM_TOKEN } from "./schema.mjs";

const [dataDir, upstreamUrl] = process.argv.slice(2);
const server = createServer({
  schema: SCHEMA,
  mutators: {},
  devAuth: true,
  adminKey: ADMIN_KEY,
  dataDir,
  // Request logs off (the figures are the ingest path's); failures still show on stderr.
  logger: {
    log(level, fields) {
      if (level === "error") process.stderr.write(`weir-server: ${JSON.stringify(fields)}\n`);
    },
  },
  upstream: {
    source: httpUpstream({ url: upstreamUrl, token: UPSTREAM_TOKEN }),
    notifyToken: NOTIFY_TOKEN,
    pollMs: 60_000,
    freshnessMs: 60_000,
    // The benchmark moves millions of rows in minutes: the breaker's budget must not stop it.
    breaker: { rows: 1_000_000_000, windowMs: 60_000 },
  },
});
const { url } = await server.listen({ port: 0 });
announce(url);
process.on("SIGTERM", () => server.close().then(() => process.exit(0)));
