import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { Schema } from "@weir/engine-wasm";
import { UpstreamCallError, type UpstreamSource } from "@weir/protocol";
import { createUpstreamServer, type SqliteUpstream, sqliteUpstream } from "@weir/upstream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { postJson, pushOne, startTestServer } from "../../test/test-server.js";
import { jsonOf, runWeir, type WeirRun } from "../../test/weir-process.js";

const TOKEN = "upstream-token-0123";
/** The table `weir bench`'s test server models, so a served namespace and the upstream agree. */
const SCHEMA: Schema = {
  tables: { item: { columns: { id: "string", value: "number" }, primaryKey: ["id"] } },
};

interface Summary {
  outcome: string;
  rows: number;
  bytes: number;
  batches: number;
  attempts: number;
  cursor: { before: string | null; after: string | null };
  watermark: number;
  error?: string;
  holder?: { pid: number };
}

let dir: string;
let db: string;
let config: string;
let upstream: SqliteUpstream;
const closers: (() => Promise<void> | void)[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "weir-ingest-"));
  db = join(dir, "app.sqlite");
  config = join(dir, "weir.config.mjs");
  writeFileSync(config, `export default { schema: ${JSON.stringify(SCHEMA)} };\n`);
  upstream = sqliteUpstream({ file: join(dir, "upstream.sqlite"), schema: SCHEMA });
  closers.push(() => upstream.close());
});

afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  rmSync(dir, { recursive: true, force: true });
});

function seed(from: number, to: number): void {
  const insert = upstream.db.prepare(
    "INSERT INTO item (id, value) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET value = excluded.value",
  );
  upstream.db.transaction(() => {
    for (let i = from; i < to; i++) insert.run(`item-${String(i).padStart(5, "0")}`, i);
  })();
}

/** Serves `source` (the SQLite upstream by default) over loopback HTTP behind the token. */
async function serve(source: UpstreamSource = upstream): Promise<string> {
  const server = createUpstreamServer({ source, token: TOKEN });
  const { url } = await server.listen();
  closers.push(() => server.close());
  return url;
}

function ingest(url: string, ...args: string[]): Promise<WeirRun> {
  return runWeir(["ingest", db, "--upstream", url, ...args], { env: { WEIR_UPSTREAM_TOKEN: TOKEN } });
}

function summaryOf(run: WeirRun): Summary {
  return jsonOf<Summary>(run);
}

async function inspect(file = db): Promise<{ watermark: number; tables: Record<string, number> }> {
  return jsonOf(await runWeir(["inspect", file, "--json"]));
}

function liveProcess(): ChildProcess {
  const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" });
  closers.push(() => {
    child.kill("SIGKILL");
  });
  return child;
}

function writeLease(pid: number): void {
  writeFileSync(
    `${db}.lease`,
    JSON.stringify({
      pid,
      host: hostname(),
      command: "weir serve --port 4848",
      started: new Date().toISOString(),
      token: "holder",
    }),
  );
}

describe("weir ingest", () => {
  it("snapshots a new namespace, then applies changes, and a rerun changes nothing", async () => {
    seed(0, 250);
    const url = await serve();
    const first = await ingest(url, "--config", config);
    expect(first.code).toBe(0);
    const snapshot = summaryOf(first);
    expect(snapshot).toMatchObject({ outcome: "complete", rows: 250, cursor: { before: null } });
    expect(snapshot.cursor.after).toBe(String(upstream.publish()));
    expect(snapshot.attempts).toBeGreaterThanOrEqual(2);
    expect(snapshot.bytes).toBeGreaterThan(250 * 10);
    expect(first.stderr).toContain("caught up with the upstream (250 rows)");
    expect((await inspect()).tables).toEqual({ item: 250 });
    expect(existsSync(`${db}.lease`)).toBe(false);

    // Changes since: an update, a delete and new rows, in two upstream transactions.
    seed(245, 260);
    upstream.db.prepare("DELETE FROM item WHERE id = ?").run("item-00000");
    // No --config: the schema is the one the file records.
    const second = await ingest(url);
    expect(second.code).toBe(0);
    const changes = summaryOf(second);
    expect(changes).toMatchObject({
      outcome: "complete",
      rows: 16,
      cursor: { before: snapshot.cursor.after },
    });
    expect(BigInt(changes.cursor.after!)).toBeGreaterThan(BigInt(snapshot.cursor.after!));
    const after = await inspect();
    expect(after.tables).toEqual({ item: 259 });

    const rerun = summaryOf(await ingest(url, "--config", config));
    expect(rerun).toMatchObject({
      outcome: "complete",
      rows: 0,
      batches: 0,
      cursor: { before: changes.cursor.after, after: changes.cursor.after },
    });
    expect(await inspect()).toMatchObject({ watermark: after.watermark, tables: { item: 259 } });
  });

  it("stops at a row budget (pending_budget) and the next run goes on from there", async () => {
    seed(0, 450);
    const url = await serve();
    const first = await ingest(url, "--config", config, "--max-rows", "100", "--page-rows", "100");
    expect(first.code).toBe(0);
    expect(summaryOf(first)).toMatchObject({
      outcome: "pending_budget",
      rows: 100,
      cursor: { before: null, after: null },
      snapshot: { state: "paging", table: "item" },
    });
    expect(first.stderr).toContain("run weir ingest again");
    // The generation is staged: no rows are visible until it finalizes.
    expect((await inspect()).tables).toEqual({ item: 0 });
    const second = await ingest(url, "--page-rows", "100");
    expect(summaryOf(second)).toMatchObject({ outcome: "complete", rows: 350, snapshot: null });
    expect((await inspect()).tables).toEqual({ item: 450 });
  });

  it("ends as pending_retry (exit 1) while the upstream answers 503 or is down, and catches up after", async () => {
    seed(0, 20);
    let calls = 0;
    const failing = await serve({
      changes: async () => {
        calls++;
        throw new UpstreamCallError(503, "unavailable", "down for maintenance");
      },
      snapshotPage: async () => {
        calls++;
        throw new UpstreamCallError(503, "unavailable", "down for maintenance");
      },
    });
    const refused = await ingest(failing, "--config", config, "--retries", "1", "--page-rows", "100");
    expect(refused.code).toBe(1);
    const summary = summaryOf(refused);
    expect(summary).toMatchObject({ outcome: "pending_retry", rows: 0, attempts: 2 });
    expect(summary.error).toContain("503");
    expect(calls).toBe(2);
    expect(refused.stderr).toContain("the upstream failed");

    // Nothing listens on a port just closed.
    const server = createUpstreamServer({ source: upstream });
    const { url: closed } = await server.listen();
    await server.close();
    // (At 100 rows a page, the smallest, a failing page is not asked again smaller.)
    const down = await ingest(closed, "--retries", "0", "--page-rows", "100");
    expect(down.code).toBe(1);
    expect(summaryOf(down)).toMatchObject({ outcome: "pending_retry", attempts: 1 });
    expect(summaryOf(down).error).toContain("unreachable");

    const healthy = await ingest(await serve());
    expect(summaryOf(healthy)).toMatchObject({ outcome: "complete", rows: 20 });
  });

  it("stops at its wall time (wall_budget_exceeded) between calls, and the next run finishes", async () => {
    seed(0, 1_000);
    const slow = await serve({
      changes: (watermark, limit) => sleep(250).then(() => upstream.changes(watermark, limit)),
      snapshotPage: (table, cursor, limit) =>
        sleep(250).then(() => upstream.snapshotPage(table, cursor, limit)),
    });
    const first = await ingest(slow, "--config", config, "--max-time", "0.6", "--page-rows", "100");
    expect(first.code).toBe(0);
    const summary = summaryOf(first);
    expect(summary.outcome).toBe("wall_budget_exceeded");
    expect(summary.rows).toBeGreaterThanOrEqual(100);
    expect(summary.rows).toBeLessThan(1_000);
    const rest = summaryOf(await ingest(await serve(), "--page-rows", "500"));
    expect(rest).toMatchObject({ outcome: "complete", rows: 1_000 - summary.rows });
    expect((await inspect()).tables).toEqual({ item: 1_000 });
  });

  it("a missing --upstream or a bad budget is a usage error (exit 2)", async () => {
    const noUpstream = await runWeir(["ingest", db, "--config", config]);
    expect(noUpstream.code).toBe(2);
    expect(noUpstream.stderr).toContain("--upstream");
    const badRows = await runWeir(["ingest", db, "--upstream", "http://127.0.0.1:1", "--max-rows", "0"]);
    expect(badRows.code).toBe(2);
    const badUrl = await runWeir(["ingest", db, "--upstream", "ftp://example.invalid"]);
    expect(badUrl.code).toBe(2);
    expect(existsSync(db)).toBe(false);
  });

  it("refuses an upstream that refuses its token and a missing schema clearly; takes a retyped column", async () => {
    seed(0, 5);
    const url = await serve();
    // A file of its own: the refusal opens that file's breaker for a minute.
    const refused = join(dir, "refused.sqlite");
    const badToken = await runWeir([
      "ingest",
      refused,
      "--upstream",
      url,
      "--config",
      config,
      "--token",
      "wrong",
    ]);
    expect(badToken.code).toBe(1);
    expect(badToken.stderr).toContain("upstream_config");
    expect(badToken.stderr).toContain("401");

    const missing = join(dir, "missing.sqlite");
    const noSchema = await runWeir(["ingest", missing, "--upstream", url, "--json"]);
    expect(noSchema.code).toBe(1);
    expect(jsonOf(noSchema)).toMatchObject({ error: "not_found" });
    expect(noSchema.stdout).toContain("--config");
    expect(existsSync(`${missing}.lease`)).toBe(false);

    const empty = join(dir, "empty.config.mjs");
    writeFileSync(empty, "export default { devAuth: true };\n");
    const noTables = await ingest(url, "--config", empty);
    expect(noTables.code).toBe(1);
    expect(noTables.stderr).toContain("has no schema");

    expect(summaryOf(await ingest(url, "--config", config))).toMatchObject({ outcome: "complete", rows: 5 });
    const other = join(dir, "other.config.mjs");
    const changed = { tables: { item: { columns: { id: "string", value: "string" }, primaryKey: ["id"] } } };
    writeFileSync(other, `export default { schema: ${JSON.stringify(changed)} };\n`);
    // A replica's column retyped is a migration: the file takes the new schema and its next
    // ingest snapshots the upstream again.
    const retyped = await ingest(url, "--config", other, "--json");
    expect(retyped.code).toBe(0);
    // The upstream still sends numbers, which a string column cannot hold: the snapshot completes
    // with those rows quarantined, not applied, and ingest does not stop.
    expect(summaryOf(await ingest(url, "--config", other))).toMatchObject({ outcome: "complete" });
    expect((await inspect()).tables).toEqual({ item: 0 });
  });
});

describe("weir ingest and the file's lease", () => {
  it("yields at once with --scheduled (exit 0, lease_busy); refuses after --wait naming the holder", async () => {
    seed(0, 10);
    const url = await serve();
    expect(summaryOf(await ingest(url, "--config", config))).toMatchObject({ rows: 10 });
    seed(10, 20);
    const holder = liveProcess();
    writeLease(holder.pid!);
    const scheduled = await ingest(url, "--scheduled", "--wait", "60");
    expect(scheduled.code).toBe(0);
    expect(summaryOf(scheduled)).toMatchObject({
      outcome: "lease_busy",
      rows: 0,
      holder: { pid: holder.pid },
    });
    const refused = await ingest(url, "--wait", "0.3");
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`pid ${holder.pid}`);
    expect(refused.stderr).toContain("weir serve --port 4848");
    expect((await inspect()).tables).toEqual({ item: 10 });
    expect(JSON.parse(readFileSync(`${db}.lease`, "utf8")).pid).toBe(holder.pid);
  });

  it("waits for a running server's lease, runs once it stops; a pull then serves the rows", async () => {
    const server = await startTestServer();
    try {
      const ns = `${server.origin}/live`;
      const push = await pushOne(ns, "alice", {
        clientID: "c1",
        id: 1,
        name: "benchPut",
        args: { id: "local", value: 1 },
      });
      expect(push.status).toBe(200);
      db = join(server.dir, ".data", "live.sqlite");
      seed(0, 30);
      const url = await serve();
      const started = Date.now();
      const waiting = ingest(url, "--wait", "30");
      await sleep(800);
      expect(await server.stop()).toBe(0);
      const run = await waiting;
      expect(run.code).toBe(0);
      expect(Date.now() - started).toBeGreaterThanOrEqual(800);
      // The snapshot replaces the namespace's rows with the upstream's.
      expect(summaryOf(run)).toMatchObject({ outcome: "complete", rows: 30 });

      const again = await startTestServer(undefined, { args: ["--data-dir", join(server.dir, ".data")] });
      closers.push(() => again.dispose());
      const pull = await postJson(
        `${again.origin}/live/pull`,
        { clientGroupID: "group-bob", clientID: "c2", cookie: null },
        { authorization: "bob" },
      );
      expect(pull.status).toBe(200);
      const puts = (pull.body as { rowsPatch: { op: string; value?: { id: string } }[] }).rowsPatch.filter(
        (op) => op.op === "put",
      );
      expect(puts.map((op) => op.value!.id).sort()).toEqual(
        Array.from({ length: 30 }, (_, i) => `item-${String(i).padStart(5, "0")}`),
      );
    } finally {
      await server.dispose();
    }
  });
});
