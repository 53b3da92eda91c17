// The app's own server for delegated push: `createPushProcessor` on PostgreSQL, one mutator that
// inserts a todo into the namespace's tenant. Run as a child process of the benchmark.
// Prints `app listening on <url>`.
import { createServer } from "node:http";
import pg from "pg";
import { createPushProcessor } from "../../dist/index.js";
import { reportCpu } from "./processes.mjs";

reportCpu();

const pool = new pg.Pool({
  connectionString: process.env.WEIR_BENCH_DATABASE_URL,
  max: Number(process.env.WEIR_BENCH_APP_POOL ?? 16),
});
const processor = createPushProcessor({
  pool,
  mutators: {
    async createTodo(tx, args, context) {
      const { id, title } = args;
      await tx.query("INSERT INTO todo (ns, id, owner, title) VALUES ($1, $2, $3, $4)", [
        context.namespace,
        id,
        context.authorization,
        title,
      ]);
    },
  },
});
const server = createServer((req, res) => void processor.handleNode(req, res));
server.keepAliveTimeout = 60_000;
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
process.stdout.write(`app listening on http://127.0.0.1:${server.address().port}/mutate\n`);

process.once("SIGTERM", async () => {
  server.close();
  await pool.end();
  process.exit(0);
});
