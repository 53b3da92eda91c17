import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createServer, namespaceWorker, type WeirServer } from "@weir/node-host";
import { startPostgres, type TestPostgres } from "@weir/postgres-testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { type PostgresUpstream, postgresUpstream, upstreamOverPort } from "../src/index.js";
import { expectConverged, tenantRows } from "./converged.js";
import { SyncedClient } from "./synced-client.js";

// The Node host with worker threads and the upstream in its process: each worker reaches the
// reader's thread through a port of its own (`workerConfig.ports`), the routing thread only
// passes the commits' namespaces on (`server.upstreamCommitted`).

const ADMIN_KEY = "admin-key-worker-threads";
const CONFIG = fileURLToPath(new URL("./fixtures/port-upstream-config.mjs", import.meta.url));
/** Two namespaces in each of the two workers. */
const ORGS = [0, 0, 1, 1].map((worker, i) => {
  for (let n = 0; ; n++) {
    const name = `org${i}-${n}`;
    if (namespaceWorker(name, 2) === worker) return name;
  }
});

let db: TestPostgres;
let dir: string;
let upstream: PostgresUpstream;
let weir: WeirServer;
let url = "";

beforeAll(async () => {
  db = await startPostgres();
  dir = mkdtempSync(join(tmpdir(), "weir-worker-threads-"));
  mkdirSync(join(dir, "data"));
  await db.sql(`CREATE TABLE item (id int PRIMARY KEY, org text NOT NULL, title text NOT NULL);
    ALTER TABLE item REPLICA IDENTITY FULL;`);
  await db.sql(
    "INSERT INTO item SELECT i, ($1::text[])[1 + i % 4], 'title ' || i FROM generate_series(1, 200) i",
    [ORGS],
  );
  upstream = await postgresUpstream({
    databaseUrl: db.url,
    tables: ["item"],
    tenant: { column: "org" },
    bufferFile: join(dir, "buffer.sqlite"),
    onCommit: (namespaces) => weir?.upstreamCommitted(namespaces),
  });
  const argument = { schema: upstream.schema, dataDir: join(dir, "data"), adminKey: ADMIN_KEY };
  weir = createServer({
    schema: upstream.schema,
    mutators: {},
    devAuth: true,
    adminKey: ADMIN_KEY,
    dataDir: argument.dataDir,
    logger: { log() {} },
    workers: 2,
    workerConfig: { module: CONFIG, argument, ports: () => ({ postgres: upstream.connect() }) },
  });
  url = (await weir.listen()).url;
});

afterAll(async () => {
  await weir?.close();
  await upstream?.close();
  await db?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const rows = (table: string, org: string) => tenantRows(db, table, "org", org);

describe("an in-process upstream with worker threads", () => {
  it("serves every worker's namespaces through their ports, and a commit wakes a socket in a worker", async () => {
    const clients = ORGS.map((org) => new SyncedClient(org, ADMIN_KEY));
    await expectConverged(url, clients, ["item"], rows);

    const org = ORGS[3]!;
    const socket = new WebSocket(`${url.replace(/^http/, "ws")}/${org}/wake?clientID=watcher`, {
      headers: { authorization: "watcher" },
    });
    await new Promise((resolve, reject) => socket.once("open", resolve).once("error", reject));
    const woken = new Promise((resolve) => socket.once("message", (data) => resolve(String(data))));
    await db.sql("INSERT INTO item VALUES (1000, $1, 'after')", [org]);
    expect(await woken).toBe("wake");
    socket.close();
    await db.sql("UPDATE item SET title = 'changed' WHERE id < 20");
    await expectConverged(url, clients, ["item"], rows);
  });

  it.each([true, false])(
    "serves a port, and refuses its calls with 503 once closed (thread: %s)",
    async (thread) => {
      const other = await postgresUpstream({
        databaseUrl: db.url,
        tables: ["item"],
        slot: "closing",
        publication: "closing",
        bufferFile: join(dir, `closing-${thread}.sqlite`),
        thread,
      });
      const reached = upstreamOverPort(other.connect());
      const page = await reached.source("x").snapshotPage("item", null, 5);
      expect(page.rows).toHaveLength(5);
      await other.close();
      await expect(reached.source("x").snapshotPage("item", null, 5)).rejects.toMatchObject({
        status: 503,
        code: "upstream_unavailable",
      });
      const late = upstreamOverPort(other.connect());
      await expect(late.source("x").changes(0n, 5)).rejects.toMatchObject({ status: 503 });
      expect(await other.dropReplication()).toEqual({ slot: true, publication: true });
    },
  );
});
