import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startPostgres, type TestPostgres } from "@weir/postgres-testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dropReplication, postgresUpstream, serveUpstream } from "../src/index.js";
import { waitFor } from "./namespace-model.js";

let db: TestPostgres;
let dir: string;

beforeAll(async () => {
  db = await startPostgres();
  dir = mkdtempSync(join(tmpdir(), "weir-operations-"));
  await db.sql(`CREATE TABLE note (id int PRIMARY KEY, org text NOT NULL, body text);
    ALTER TABLE note REPLICA IDENTITY FULL;
    CREATE ROLE app LOGIN;
    GRANT SELECT ON note TO app;`);
});

afterAll(async () => {
  await db?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** A stand-in for weir's notify route: records each call. */
async function recordingServer(): Promise<{
  server: Server;
  url: string;
  calls: { path: string; auth: string; body: unknown; at: number }[];
}> {
  const calls: { path: string; auth: string; body: unknown; at: number }[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => {
      body += chunk;
    });
    req.on("end", () => {
      calls.push({
        path: req.url ?? "",
        auth: req.headers.authorization ?? "",
        body: JSON.parse(body),
        at: Date.now(),
      });
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ watermark: 0, applied: 0 }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, calls };
}

describe("operations", () => {
  it("refuses a server without wal_level=logical, naming the fix", async () => {
    const replica = await startPostgres({ walLevel: "replica", privateCluster: true });
    try {
      await replica.sql("CREATE TABLE note (id int PRIMARY KEY)");
      const attempt = postgresUpstream({
        databaseUrl: replica.url,
        tables: ["note"],
        bufferFile: join(dir, "r.sqlite"),
      });
      await expect(attempt).rejects.toThrow(/wal_level is replica.*ALTER SYSTEM SET wal_level = logical/);
    } finally {
      await replica.stop();
    }
  });

  it("refuses a role without REPLICATION, naming the fix", async () => {
    const url = new URL(db.url);
    url.username = "app";
    const attempt = postgresUpstream({
      databaseUrl: url.toString(),
      tables: ["note"],
      bufferFile: join(dir, "role.sqlite"),
    });
    await expect(attempt).rejects.toThrow(
      /role app lacks the REPLICATION attribute.*run ALTER ROLE "app" REPLICATION/,
    );
  });

  it("notifies weir after each commit, reports status and metrics over HTTP, and drops the slot only when asked", async () => {
    const weir = await recordingServer();
    const upstream = await postgresUpstream({
      databaseUrl: db.url,
      tables: ["note"],
      tenant: { column: "org" },
      slot: "ops",
      publication: "ops",
      bufferFile: join(dir, "ops.sqlite"),
      notify: { url: `${weir.url}/base/`, token: "notify-token" },
    });
    const server = serveUpstream(upstream, { token: "t" });
    const { url } = await server.listen();
    try {
      await db.sql("INSERT INTO note VALUES (1, 'acme', 'a'), (2, 'globex/eu', 'b')");
      await waitFor(() => weir.calls.length >= 2, 10_000, "two notify calls");
      const head = (await upstream.status()).buffer.newestWatermark;
      expect(weir.calls.map((call) => call.path).sort()).toEqual([
        "/base/acme/notify",
        "/base/globex%2Feu/notify",
      ]);
      for (const call of weir.calls) {
        expect(call.auth).toBe("Bearer notify-token");
        expect(call.body).toEqual({ watermark: head });
      }

      // A second reader on the same slot is refused at start.
      await expect(
        postgresUpstream({
          databaseUrl: db.url,
          tables: ["note"],
          slot: "ops",
          publication: "ops",
          bufferFile: join(dir, "ops-2.sqlite"),
        }),
      ).rejects.toThrow(/active/);

      await fetch(`${url}/acme/changes?watermark=${head}&limit=10`, {
        headers: { authorization: "Bearer t" },
      });
      const status = (await (
        await fetch(`${url}/status`, { headers: { authorization: "Bearer t" } })
      ).json()) as Record<
        string,
        // biome-ignore lint/suspicious/noExplicitAny: checked below
        any
      >;
      expect(status).toMatchObject({
        state: "streaming",
        slot: "ops",
        publication: "ops",
        tables: ["note"],
        buffer: { changes: 2, transactions: 1, newestWatermark: head },
        namespaces: { acme: { watermark: head } },
        reconnect: { attempts: 0, failures: 0 },
        notify: { sent: 2, failed: 0 },
        drift: null,
      });
      expect(status.slotLagBytes).toEqual(expect.any(Number));
      expect(status.buffer.bytes).toBeGreaterThan(0);
      expect((await fetch(`${url}/status`)).status).toBe(401);

      const metrics = await (
        await fetch(`${url}/metrics`, { headers: { authorization: "Bearer t" } })
      ).text();
      expect(metrics).toContain("weir_upstream_buffer_changes 2");
      expect(metrics).toContain("weir_upstream_streaming 1");
      expect(metrics).toContain(`weir_upstream_namespace_watermark{namespace="acme"} ${head}`);
      expect(metrics).toContain('weir_upstream_notify_calls{result="ok"} 2');
      expect(metrics).toMatch(/weir_upstream_slot_lag_bytes \d+/);

      // Dropping refuses a slot in use; closing keeps the slot.
      await expect(
        dropReplication({ databaseUrl: db.url, slot: "ops", publication: "ops", waitMs: 200 }),
      ).rejects.toThrow(/in use/);
    } finally {
      await server.close();
      await upstream.close();
      weir.server.close();
    }
    const slots = async () =>
      (await db.sql("SELECT slot_name FROM pg_replication_slots WHERE slot_name = 'ops'")).rowCount;
    const publications = async () =>
      (await db.sql("SELECT 1 FROM pg_publication WHERE pubname = 'ops'")).rowCount;
    expect(await slots()).toBe(1);
    expect(await publications()).toBe(1);
    // Right after its reader stopped, the slot is released within the wait.
    expect(await dropReplication({ databaseUrl: db.url, slot: "ops", publication: "ops" })).toEqual({
      slot: true,
      publication: true,
    });
    expect(await slots()).toBe(0);
    expect(await publications()).toBe(0);
  });

  it("counts failed notify calls and goes on", async () => {
    const upstream = await postgresUpstream({
      databaseUrl: db.url,
      tables: ["note"],
      slot: "nobody",
      publication: "nobody",
      bufferFile: join(dir, "nobody.sqlite"),
      namespaces: ["main"],
      // Nothing listens on port 9 of the loopback.
      notify: { url: "http://127.0.0.1:9", timeoutMs: 1_000 },
    });
    try {
      await db.sql("INSERT INTO note VALUES (3, 'acme', 'c')");
      await waitFor(async () => ((await upstream.status()).notify?.failed ?? 0) >= 1, 10_000);
      const status = await upstream.status();
      expect(status.notify).toMatchObject({ sent: 0, failed: 1, lastError: expect.any(String) });
      expect(status.state).toBe("streaming");
    } finally {
      await upstream.dropReplication();
    }
  });
});
