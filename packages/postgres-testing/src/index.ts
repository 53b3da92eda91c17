import { execFileSync, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";

/**
 * A PostgreSQL database for tests, with `wal_level=logical`. Either a private cluster that
 * this process started in a temporary directory (and stops and removes in `stop()`), or a
 * fresh database on the server `WEIR_TEST_DATABASE_URL` names (dropped in `stop()`).
 */
export interface TestPostgres {
  /** A connection URL for the test's own database. */
  readonly url: string;
  readonly port: number;
  readonly database: string;
  /** Whether this process runs the cluster, so that it can stop and start it under a reader. */
  readonly private: boolean;
  /** Runs SQL on the test database (a short-lived connection). */
  sql(text: string, params?: unknown[]): Promise<pg.QueryResult>;
  /** Stops the server (private clusters only), keeping its data. */
  stopServer(): void;
  /** Starts it again on the same port (private clusters only). */
  startServer(): void;
  /** Drops the database, stops the cluster and removes its directory. */
  stop(): Promise<void>;
}

export interface StartPostgresOptions {
  /** `logical` unless given; `replica` makes a server that logical replication refuses. */
  walLevel?: "logical" | "replica";
  /** Ignore `WEIR_TEST_DATABASE_URL` and always start a private cluster. */
  privateCluster?: boolean;
  /** Keep fsync on (benchmarks); tests turn it off, since they never crash the server's machine. */
  durable?: boolean;
}

const POSTGRES_ROOT = "/usr/lib/postgresql";

/** The newest installed PostgreSQL's `bin` folder, installing Debian's package when none is. */
export function postgresBinaries(): string {
  const found = findBinaries();
  if (found) return found;
  if (process.getuid?.() === 0 && existsSync("/usr/bin/apt-get")) {
    const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
    spawnSync("apt-get", ["update"], { stdio: "ignore", env });
    const install = spawnSync("apt-get", ["install", "-y", "--no-install-recommends", "postgresql"], {
      stdio: "ignore",
      env,
    });
    const after = findBinaries();
    if (install.status === 0 && after) return after;
  }
  throw new Error(
    "PostgreSQL's server binaries are missing (no initdb under /usr/lib/postgresql/*/bin): install the postgresql package, or set WEIR_TEST_DATABASE_URL to a server with wal_level=logical",
  );
}

function findBinaries(): string | null {
  if (!existsSync(POSTGRES_ROOT)) return null;
  const versions = readdirSync(POSTGRES_ROOT)
    .filter((name) => existsSync(join(POSTGRES_ROOT, name, "bin", "initdb")))
    .sort((a, b) => Number(b) - Number(a));
  return versions.length > 0 ? join(POSTGRES_ROOT, versions[0]!, "bin") : null;
}

/** A TCP port on 127.0.0.1 that nothing listens on now (for a server a test starts later). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** PostgreSQL refuses to run as root: as root, its commands run as the `postgres` user. */
function runAs(command: string, args: string[]): void {
  const asRoot = process.getuid?.() === 0;
  const [file, argv] = asRoot ? ["runuser", ["-u", "postgres", "--", command, ...args]] : [command, args];
  execFileSync(file, argv, { stdio: ["ignore", "pipe", "pipe"] });
}

async function sqlOn(url: string, text: string, params?: unknown[]): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await client.query(text, params);
  } finally {
    await client.end();
  }
}

function testDatabaseName(): string {
  return `weir_test_${randomBytes(6).toString("hex")}`;
}

/** Starts a test database (see `TestPostgres`). Call `stop()` when done, even after a failure. */
export async function startPostgres(options: StartPostgresOptions = {}): Promise<TestPostgres> {
  const external = process.env.WEIR_TEST_DATABASE_URL;
  if (external && !options.privateCluster && (options.walLevel ?? "logical") === "logical") {
    return externalDatabase(external);
  }
  return privateCluster(options.walLevel ?? "logical", options.durable ?? false);
}

async function externalDatabase(serverUrl: string): Promise<TestPostgres> {
  const database = testDatabaseName();
  await sqlOn(serverUrl, `CREATE DATABASE ${database}`);
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  const unsupported = () => {
    throw new Error("a server named by WEIR_TEST_DATABASE_URL is not this process's to stop or start");
  };
  return {
    url: url.toString(),
    port: Number(url.port || 5432),
    database,
    private: false,
    sql: (text, params) => sqlOn(url.toString(), text, params),
    stopServer: unsupported,
    startServer: unsupported,
    async stop() {
      // Slots pin the database: drop the test's slots before the database itself.
      await sqlOn(
        serverUrl,
        "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE database = $1 AND NOT active",
        [database],
      ).catch(() => {});
      await sqlOn(serverUrl, `DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    },
  };
}

/** Starts of a private server tried before giving up, each on another free port. */
const START_ATTEMPTS = 3;

async function privateCluster(walLevel: "logical" | "replica", durable: boolean): Promise<TestPostgres> {
  const bin = postgresBinaries();
  const dir = mkdtempSync(join(tmpdir(), "weir-pg-"));
  const data = join(dir, "data");
  // The postgres user must reach the directory that root's mkdtemp made private.
  chmodSync(dir, 0o777);
  let port = 0;
  const options = () =>
    [
      `-p ${port}`,
      `-c wal_level=${walLevel}`,
      "-c max_wal_senders=10",
      "-c max_replication_slots=10",
      `-k ${dir}`,
      "-c listen_addresses=127.0.0.1",
      ...(durable ? ["-c shared_buffers=256MB"] : ["-c fsync=off", "-c full_page_writes=off"]),
    ].join(" ");
  const log = join(dir, "server.log");
  let running = false;
  const pgCtl = (...args: string[]) => runAs(join(bin, "pg_ctl"), ["-D", data, ...args]);
  const startServer = () => {
    pgCtl("-o", options(), "-l", log, "-w", "start");
    running = true;
  };
  const stopServer = () => {
    if (!running) return;
    pgCtl("-m", "fast", "-w", "stop");
    running = false;
  };
  // A test process that dies before its `stop()` must not leave a server running.
  const onExit = () => {
    try {
      stopServer();
    } catch {}
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    runAs(join(bin, "initdb"), ["-D", data, "-A", "trust", "-U", "postgres", "--no-sync"]);
    // The free port can be taken by another process between its choice and the server's bind:
    // then the server starts again on another.
    for (let attempt = 1; ; attempt++) {
      port = await freePort();
      try {
        startServer();
        break;
      } catch (error) {
        const said = existsSync(log) ? readFileSync(log, "utf8") : "";
        if (attempt < START_ATTEMPTS && /could not bind|already in use/i.test(said)) continue;
        throw new Error(`${(error as Error).message}\n${said.split("\n").slice(-20).join("\n")}`);
      }
    }
  } catch (error) {
    onExit();
    throw error;
  }
  process.once("exit", onExit);
  const database = testDatabaseName();
  const serverUrl = `postgres://postgres@127.0.0.1:${port}/postgres`;
  await sqlOn(serverUrl, `CREATE DATABASE ${database}`);
  const url = `postgres://postgres@127.0.0.1:${port}/${database}`;
  return {
    url,
    port,
    database,
    private: true,
    sql: (text, params) => sqlOn(url, text, params),
    stopServer,
    startServer,
    async stop() {
      process.off("exit", onExit);
      onExit();
    },
  };
}
