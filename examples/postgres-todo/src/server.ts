import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadStaticFiles, staticFilesHandler } from "@weir/example-todo/server/static-files";
import { untilStopped } from "@weir/node-host";
import { startPostgres, type TestPostgres } from "@weir/postgres-testing";
import { startPostgresTodo } from "./start-postgres-todo.js";

// The todo app with PostgreSQL as the system of record. `node dist/server.js` follows the
// database DATABASE_URL names (its server needs wal_level=logical); `--private-postgres` starts a
// throwaway cluster with wal_level=logical instead, removed with its data when the server stops.

const privatePostgres = process.argv.includes("--private-postgres");
const port = Number(process.env.PORT ?? 4848);
const appPort = Number(process.env.APP_PORT ?? 4850);
const host = process.env.HOST || "127.0.0.1";

let cluster: TestPostgres | undefined;
let dataDir = process.env.WEIR_DATA_DIR || ".data";
let databaseUrl = process.env.DATABASE_URL ?? "";
if (privatePostgres) {
  console.log("postgres-todo: starting a private PostgreSQL cluster (wal_level=logical)");
  cluster = await startPostgres({ privateCluster: true });
  databaseUrl = cluster.url;
  // A new cluster is a new upstream: weir's replica and the change buffer start afresh with it.
  if (!process.env.WEIR_DATA_DIR) dataDir = mkdtempSync(join(tmpdir(), "postgres-todo-"));
} else if (!databaseUrl) {
  console.error(
    "postgres-todo: set DATABASE_URL to the app's database (its server needs wal_level=logical), or run with --private-postgres",
  );
  process.exit(1);
}

const files = await loadStaticFiles(new URL("./public/", import.meta.url));
console.log(
  "weir: development authentication is on: the Authorization header is the user id, unverified. Never use it in production.",
);
let todo: Awaited<ReturnType<typeof startPostgresTodo>>;
try {
  todo = await startPostgresTodo({
    databaseUrl,
    dataDir,
    host,
    port,
    appPort,
    ...(process.env.WEIR_ADMIN_KEY ? { adminKey: process.env.WEIR_ADMIN_KEY } : {}),
    onRequest: staticFilesHandler(files),
  });
} catch (error) {
  console.error(`postgres-todo: cannot start: ${(error as Error).message}`);
  if (!privatePostgres) {
    console.error(
      "postgres-todo: or run with --private-postgres to start a cluster of its own (see the README)",
    );
  }
  await cluster?.stop();
  process.exit(1);
}

console.log(`weir listening on ${todo.url}`);
console.log(`app server: ${todo.appUrl} (weir forwards pushes here; it writes PostgreSQL)`);
console.log(`PostgreSQL: ${databaseUrl.replace(/\/\/([^:@/]+):[^@]*@/, "//$1:***@")}`);
console.log(`todo app: open ${todo.url}/ in two windows; weir's data is in ${dataDir}/`);
console.log(
  process.env.WEIR_ADMIN_KEY
    ? `admin: ${todo.url}/todo/admin/status with the header x-admin-key: $WEIR_ADMIN_KEY`
    : "admin: closed (set WEIR_ADMIN_KEY to open /todo/admin/…)",
);
if (cluster) {
  console.log(
    `psql: psql '${cluster.url}' -c "INSERT INTO todo VALUES ('t1', 'alice', 'from psql', false, 1)"`,
  );
}

untilStopped(todo, (line) => console.log(line)).then(
  async () => {
    if (cluster) {
      await cluster.stop();
      if (!process.env.WEIR_DATA_DIR) rmSync(dataDir, { recursive: true, force: true });
    }
    process.exit(0);
  },
  (error: unknown) => {
    console.error("postgres-todo: shutdown failed", error);
    process.exit(1);
  },
);
