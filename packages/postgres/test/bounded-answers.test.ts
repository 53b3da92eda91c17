import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { httpUpstream } from "@weir/host-core";
import { createServer, type WeirServer } from "@weir/node-host";
import { startPostgres, type TestPostgres } from "@weir/postgres-testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type PostgresUpstream, postgresUpstream, serveUpstream } from "../src/index.js";
import { waitFor } from "./namespace-model.js";

// weir's answers to notify and the admin routes while its upstream (`weir upstream postgres`
// over HTTP) is down or misconfigured: within `answerWithinMs`, with the retries going on in the
// background, and a 404 as a configuration error, not an outage.

const ADMIN = { "x-admin-key": "admin-key-bounded-answers" };
const NOTIFY = { authorization: "Bearer notify-token-bounded" };

let db: TestPostgres;
let dir: string;
let upstream: PostgresUpstream;
let upstreamServer: ReturnType<typeof serveUpstream> | null = null;
let upstreamPort = 0;
const weirs: WeirServer[] = [];

async function serveOnce(): Promise<void> {
  upstreamServer = serveUpstream(upstream);
  upstreamPort = (await upstreamServer.listen({ port: upstreamPort, host: "127.0.0.1" })).port;
}

async function startWeir(schema: typeof upstream.schema, dataDir: string): Promise<string> {
  mkdirSync(join(dir, dataDir));
  const weir = createServer({
    schema,
    mutators: {},
    upstream: {
      source: (namespace) => httpUpstream({ url: `http://127.0.0.1:${upstreamPort}/${namespace}` }),
      notifyToken: "notify-token-bounded",
      answerWithinMs: 3_000,
    },
    adminKey: ADMIN["x-admin-key"],
    devAuth: true,
    dataDir: join(dir, dataDir),
    logger: { log() {} },
  });
  weirs.push(weir);
  return (await weir.listen()).url;
}

async function call(method: string, url: string, headers: Record<string, string>) {
  const response = await fetch(url, { method, headers });
  // biome-ignore lint/suspicious/noExplicitAny: tests read answers field by field
  return { status: response.status, headers: response.headers, body: (await response.json()) as any };
}

beforeAll(async () => {
  db = await startPostgres();
  dir = mkdtempSync(join(tmpdir(), "weir-bounded-"));
  await db.sql(`CREATE TABLE note (id int PRIMARY KEY, org text NOT NULL, body text);
    ALTER TABLE note REPLICA IDENTITY FULL;
    INSERT INTO note VALUES (1, 'acme', 'one');`);
  upstream = await postgresUpstream({
    databaseUrl: db.url,
    tables: ["note"],
    tenant: { column: "org" },
    bufferFile: join(dir, "buffer.sqlite"),
  });
  await serveOnce();
});

afterAll(async () => {
  for (const weir of weirs) await weir.close();
  await upstreamServer?.close();
  await upstream?.close();
  await db?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe("bounded answers", () => {
  it("notify with the upstream down answers 503 while the pass still runs, and the retries go on in the background until it catches up", async () => {
    const url = await startWeir(upstream.schema, "down");
    const first = await call("POST", `${url}/acme/notify`, NOTIFY);
    expect(first.status).toBe(200);

    await upstreamServer!.close();
    await db.sql("INSERT INTO note VALUES (2, 'acme', 'two')");
    const answer = await call("POST", `${url}/acme/notify`, NOTIFY);
    expect(answer.status).toBe(503);
    expect(answer.body.error).toBe("upstream_unavailable");
    expect(answer.body.message).toMatch(/unreachable.*retrying in the background/);
    expect(Number(answer.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    // Answered while the pass goes on: it has not given up.
    const during = await call("GET", `${url}/acme/admin/status`, ADMIN);
    expect(during.body.upstream.running).toBe(true);
    const cursor = during.body.upstream.cursor as string;

    // The upstream comes back; nothing is asked of weir but its status, and it catches up.
    await serveOnce();
    await waitFor(
      async () => {
        const status = await call("GET", `${url}/acme/admin/status`, ADMIN);
        return (
          status.body.upstream.cursor !== cursor && status.body.upstream.lastPass?.outcome === "complete"
        );
      },
      50_000,
      "the background retries to catch up",
    );
    const pulled = await fetch(`${url}/acme/pull`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "u" },
      body: JSON.stringify({ clientGroupID: "g", clientID: "c", cookie: null }),
    });
    const rows = ((await pulled.json()) as { rowsPatch: { op: string; value?: { id: number } }[] }).rowsPatch
      .filter((op) => op.op === "put")
      .map((op) => op.value!.id);
    expect(rows.sort()).toEqual([1, 2]);
  });

  it("a 404 from the upstream (a table it does not serve) is a configuration error: 502 naming it, the breaker opens, no retry loop", async () => {
    const schema = {
      tables: {
        ...upstream.schema.tables,
        missing: { columns: { id: "integer" as const }, primaryKey: ["id"] },
      },
    };
    const url = await startWeir(schema, "misconfigured");
    const answer = await call("POST", `${url}/acme/notify`, NOTIFY);
    expect(answer.status).toBe(502);
    expect(answer.body.error).toBe("upstream_misconfigured");
    expect(answer.body.message).toMatch(/404.*unknown table missing/);
    const status = await call("GET", `${url}/acme/admin/status`, ADMIN);
    expect(status.body.upstream.breaker.open).toMatchObject({ reason: "upstream_config" });
    // One call, not retried; the next notify is refused by the open breaker without calling.
    const attempts = status.body.upstream.attempts as number;
    const again = await call("POST", `${url}/acme/notify`, NOTIFY);
    expect(again.status).toBe(502);
    expect(again.body.error).toBe("upstream_misconfigured");
    expect((await call("GET", `${url}/acme/admin/status`, ADMIN)).body.upstream.attempts).toBe(attempts);
  });
});
