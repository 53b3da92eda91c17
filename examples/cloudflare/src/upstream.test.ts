import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type PostgresUpstream, postgresUpstream, serveUpstream } from "@weir/postgres";
import { freePort, startPostgres, type TestPostgres } from "@weir/postgres-testing";
import type { UpstreamServer } from "@weir/upstream";
import type { Miniflare } from "miniflare";
import { afterAll, beforeAll, expect, it } from "vitest";
import { bundleWorker, startWorker } from "../test/start-worker.js";

// The edge Worker as a replica of PostgreSQL: `weir upstream postgres` (here its library form,
// the same server) serves the contract with a bearer token, the Worker reaches it by URL, and
// the upstream's notifier wakes the namespace after each commit.
const UPSTREAM_TOKEN = "upstream-secret";
const NOTIFY_TOKEN = "notify-secret";

let db: TestPostgres;
let dir: string;
let upstream: PostgresUpstream;
let server: UpstreamServer;
let mf: Miniflare | undefined;
let url = "";

beforeAll(async () => {
  const bundle = bundleWorker();
  db = await startPostgres();
  dir = mkdtempSync(join(tmpdir(), "weir-cloudflare-upstream-"));
  await db.sql(`CREATE TABLE todo (id text PRIMARY KEY, owner text NOT NULL, text text NOT NULL,
      done boolean NOT NULL, sort double precision NOT NULL);
    ALTER TABLE todo REPLICA IDENTITY FULL;
    INSERT INTO todo VALUES ('p1', 'alice', 'from postgres', false, 1);`);
  // The Worker's address is fixed first: the notifier is told it when the upstream starts.
  const port = await freePort();
  upstream = await postgresUpstream({
    databaseUrl: db.url,
    tables: ["todo"],
    bufferFile: join(dir, "buffer.sqlite"),
    notify: { url: `http://127.0.0.1:${port}`, token: NOTIFY_TOKEN },
  });
  server = serveUpstream(upstream, { token: UPSTREAM_TOKEN });
  const upstreamUrl = (await server.listen()).url;
  ({ mf, url } = await startWorker(bundle.outdir, {
    port,
    bindings: { UPSTREAM_URL: upstreamUrl, UPSTREAM_TOKEN, NOTIFY_TOKEN, ADMIN_KEY: "example-admin-key" },
  }));
});

afterAll(async () => {
  await mf?.dispose();
  await server?.close();
  await upstream?.close();
  await db?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

interface Client {
  user: string;
  cookie: unknown;
  rows: Map<string, unknown>;
}

/** Pulls as a client applies the answer (clear, put, del), returning whether anything changed. */
async function pull(client: Client): Promise<boolean> {
  const response = await fetch(`${url}/todo/pull`, {
    method: "POST",
    headers: { authorization: client.user, "content-type": "application/json" },
    body: JSON.stringify({
      clientGroupID: `g-${client.user}`,
      clientID: `c-${client.user}`,
      cookie: client.cookie,
    }),
  });
  expect(response.status).toBe(200);
  const body = (await response.json()) as {
    cookie: unknown;
    unchanged?: true;
    rowsPatch?: Array<{ op: string; id?: { id: string }; value?: { id: string } }>;
  };
  for (const op of body.rowsPatch ?? []) {
    if (op.op === "clear") client.rows.clear();
    else if (op.op === "put") client.rows.set(op.value!.id, op.value);
    else if (op.op === "del") client.rows.delete(op.id!.id);
  }
  client.cookie = body.cookie;
  return body.unchanged !== true;
}

async function pullUntil(client: Client, done: () => boolean): Promise<void> {
  const until = Date.now() + 20_000;
  await pull(client);
  while (!done()) {
    if (Date.now() > until)
      throw new Error(`${client.user} never saw the change: ${[...client.rows.keys()]}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    await pull(client);
  }
}

it("replicates PostgreSQL into the namespace: the snapshot, then each commit, through each user's visibility", async () => {
  const alice: Client = { user: "alice", cookie: null, rows: new Map() };
  const bob: Client = { user: "bob", cookie: null, rows: new Map() };
  await pullUntil(alice, () => alice.rows.has("p1"));
  expect(alice.rows.get("p1")).toEqual({
    id: "p1",
    owner: "alice",
    text: "from postgres",
    done: false,
    sort: 1,
  });
  await pull(bob);
  expect([...bob.rows.keys()]).toEqual([]);

  await db.sql("INSERT INTO todo VALUES ('p2', 'alice', 'written with psql', true, 2.5)");
  await pullUntil(alice, () => alice.rows.has("p2"));
  expect(alice.rows.get("p2")).toEqual({
    id: "p2",
    owner: "alice",
    text: "written with psql",
    done: true,
    sort: 2.5,
  });

  // A row given to bob leaves alice's client and reaches his.
  await db.sql("UPDATE todo SET owner = 'bob' WHERE id = 'p1'");
  await pullUntil(alice, () => !alice.rows.has("p1"));
  await pullUntil(bob, () => bob.rows.has("p1"));
  expect([...alice.rows.keys()]).toEqual(["p2"]);

  // The upstream's notifier reached the Worker with its token each time, refused without it.
  const status = await upstream.status();
  expect(status.notify).toMatchObject({ failed: 0 });
  expect(status.notify.sent).toBeGreaterThanOrEqual(2);
  const refused = await fetch(`${url}/todo/notify`, { method: "POST", body: "{}" });
  expect(refused.status).toBe(401);
});

it("keeps the upstream behind its token, and shows the namespace's cursor in its status", async () => {
  const { port } = server.httpServer.address() as { port: number };
  const unauthorized = await fetch(`http://127.0.0.1:${port}/todo/changes?watermark=0&limit=1`);
  expect(unauthorized.status).toBe(401);
  const status = await fetch(`${url}/todo/admin/status`, { headers: { "x-admin-key": "example-admin-key" } });
  expect(status.status).toBe(200);
  const body = (await status.json()) as { upstream?: { cursor?: unknown; breaker?: unknown } };
  expect(body.upstream?.cursor).toEqual(expect.anything());
});
