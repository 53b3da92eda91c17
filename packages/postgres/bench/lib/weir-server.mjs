// A weir Node server (file storage) whose namespaces replicate PostgreSQL through an in-process
// `postgresUpstream`, and delegate their pushes to the app at WEIR_BENCH_APP_URL. Run as a child
// process of the benchmark, so that its event loop is its own. Prints `weir listening on <url>`.
import { createServer } from "@weir/node-host";
import { postgresUpstream } from "../../dist/index.js";
import { reportCpu } from "./processes.mjs";

reportCpu();

const env = process.env;
const upstream = await postgresUpstream({
  databaseUrl: env.WEIR_BENCH_DATABASE_URL,
  tables: ["item", "feed", "beat", "todo"],
  tenant: { column: "ns" },
  bufferFile: env.WEIR_BENCH_BUFFER,
  slot: "weir_e2e",
  publication: "weir_e2e",
  // `pnpm bench postgres --no-thread`: the reader on this process's one thread, as before.
  thread: env.WEIR_BENCH_UPSTREAM_THREAD !== "0",
  // The in-process notify: each buffered commit starts a pass in the namespaces it reached.
  onCommit: (namespaces) => server.host?.upstreamCommitted(namespaces),
});

const server = createServer({
  schema: upstream.schema,
  mutators: {},
  // Each user sees their own todos (the app server records the caller as the owner).
  visibility: (claims) => ({ todo: { sql: "owner = ?", params: [claims.userID] } }),
  upstream: {
    source: (namespace) => upstream.source(namespace),
    // The benchmark moves a million rows on purpose.
    breaker: { rows: 100_000_000, windowMs: 60_000 },
    // The initial sync is timed as one admin ingest call: it answers when the pass ends, not
    // after the default 5 s with the pass going on in the background.
    answerWithinMs: 600_000,
    // Snapshot pages of 10,000 rows (the default 2,000 pays a page's fixed costs five times as
    // often: about 28,000 rows/s here instead of 75,000); WEIR_BENCH_PAGE_ROWS sets another.
    pageRows: Number(env.WEIR_BENCH_PAGE_ROWS ?? 10_000),
  },
  mutate: { url: env.WEIR_BENCH_APP_URL },
  devAuth: true,
  adminKey: "bench-admin-key",
  dataDir: env.WEIR_BENCH_DATA_DIR,
  storage: "file",
  quotas: { requestUnits: null, newNamespacesPerDay: null },
  // A line per request would cost as much as some of the requests; errors go to stderr.
  logger: {
    log(level, fields) {
      if (level === "error") process.stderr.write(`${JSON.stringify(fields)}\n`);
    },
  },
});
const { url } = await server.listen();
process.stdout.write(`weir listening on ${url}\n`);

process.once("SIGTERM", async () => {
  await server.close();
  await upstream.dropReplication();
  process.exit(0);
});
