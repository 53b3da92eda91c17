import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Worker } from "node:worker_threads";
import { startPostgres, type TestPostgres } from "@weir/postgres-testing";
import { UpstreamCallError } from "@weir/protocol";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postgresUpstream, upstreamOverPort } from "../src/index.js";

// The reader runs in a worker thread of its own by default: PostgreSQL's commits are decoded
// and buffered while the caller's thread is busy, and the upstream answers as it does in one
// thread (its refusals keep their class, status and code).

let db: TestPostgres;
let dir: string;

beforeAll(async () => {
  db = await startPostgres();
  dir = mkdtempSync(join(tmpdir(), "weir-upstream-thread-"));
  await db.sql("CREATE TABLE pulse (id int PRIMARY KEY, org text NOT NULL, n int NOT NULL)");
  await db.sql("ALTER TABLE pulse REPLICA IDENTITY FULL");
});

afterAll(async () => {
  await db?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Commits in PostgreSQL from another process, while this thread waits for it. */
function insertFromAnotherProcess(id: number, org: string): void {
  const script = `import pg from "pg";
const client = new pg.Client({ connectionString: process.argv[1] });
await client.connect();
await client.query("INSERT INTO pulse VALUES ($1, $2, 1)", [Number(process.argv[2]), process.argv[3]]);
await client.end();`;
  const run = spawnSync(process.execPath, ["--input-type=module", "-e", script, db.url, String(id), org], {
    cwd: join(import.meta.dirname, ".."),
    encoding: "utf8",
  });
  if (run.status !== 0) throw new Error(`insert failed: ${run.stderr}`);
}

/** Blocks this thread until the buffer file holds `count` transactions (or `deadlineMs` passes). */
function blockUntilBuffered(file: string, count: number, deadlineMs: number): number {
  const buffer = new Database(file, { readonly: true });
  try {
    const end = Date.now() + deadlineMs;
    const transactions = buffer.prepare("SELECT count(*) AS n FROM tx");
    let seen = (transactions.get() as { n: number }).n;
    while (seen < count && Date.now() < end) seen = (transactions.get() as { n: number }).n;
    return seen;
  } finally {
    buffer.close();
  }
}

describe("the reader's thread", () => {
  it("buffers a commit while the caller's thread is blocked, then tells the caller's onCommit", async () => {
    const bufferFile = join(dir, "blocked.sqlite");
    const commits: Array<{ namespaces: string[]; watermark: bigint }> = [];
    const upstream = await postgresUpstream({
      databaseUrl: db.url,
      tables: ["pulse"],
      tenant: { column: "org" },
      slot: "blocked",
      publication: "blocked",
      bufferFile,
      onCommit: (namespaces, watermark) => commits.push({ namespaces, watermark }),
    });
    try {
      const start = BigInt((await upstream.status()).buffer.newestWatermark);
      const before = blockUntilBuffered(bufferFile, 0, 0);
      // This thread runs nothing else from here to the check: no event, no timer, no callback.
      insertFromAnotherProcess(1, "acme");
      const buffered = blockUntilBuffered(bufferFile, before + 1, 20_000);
      expect(buffered).toBe(before + 1);
      expect(commits).toEqual([]);

      await expect.poll(() => commits.length).toBe(1);
      expect(commits[0]!.namespaces).toEqual(["acme"]);
      const page = await upstream.source("acme").changes(start, 10);
      expect(page.changes[0]?.watermark).toBe(commits[0]!.watermark);
      expect(page.changes).toMatchObject([
        { op: "INSERT", tableName: "pulse", rowData: { id: 1, org: "acme", n: 1 } },
      ]);
      expect((await upstream.status()).committed.transactions).toBe(1);
    } finally {
      await upstream.close();
    }
  });

  it("starts a thread that failed again: a source and a port handed out before go on with the new one", async () => {
    const logs: Array<Record<string, unknown>> = [];
    const commits: string[][] = [];
    const upstream = await postgresUpstream({
      databaseUrl: db.url,
      tables: ["pulse"],
      tenant: { column: "org" },
      slot: "restarted",
      publication: "restarted",
      bufferFile: join(dir, "restarted.sqlite"),
      logger: { log: (level, fields) => logs.push({ level, ...fields }) },
      onCommit: (namespaces) => commits.push(namespaces),
    });
    const port = upstreamOverPort(upstream.connect());
    try {
      const source = upstream.source("globex");
      const overPort = port.source("globex");
      const start = BigInt((await upstream.status()).buffer.newestWatermark);
      expect((await overPort.changes(start, 10)).changes).toEqual([]);
      // The thread ends as a crash would end it.
      const thread = (upstream as unknown as Record<symbol, () => Worker | undefined>)[
        Symbol.for("weir.postgres.readerThread")
      ]!();
      await thread!.terminate();
      await expect(source.changes(start, 10)).rejects.toMatchObject({
        status: 503,
        code: "upstream_unavailable",
      });
      await expect(overPort.changes(start, 10)).rejects.toMatchObject({ status: 503 });
      expect(logs).toContainEqual(expect.objectContaining({ level: "error", msg: "upstream thread failed" }));
      await expect
        .poll(() => logs.some((line) => line.msg === "upstream thread restarted"), { timeout: 30_000 })
        .toBe(true);
      // The new thread follows PostgreSQL from the slot: a commit now reaches the caller and both ends.
      await db.sql("INSERT INTO pulse VALUES (20, 'globex', 2)");
      await expect
        .poll(() => commits.some((namespaces) => namespaces.includes("globex")), { timeout: 20_000 })
        .toBe(true);
      const expected = [{ op: "INSERT", tableName: "pulse", rowData: { id: 20, org: "globex", n: 2 } }];
      expect((await source.changes(start, 10)).changes).toMatchObject(expected);
      expect((await overPort.changes(start, 10)).changes).toMatchObject(expected);
      expect((await upstream.status()).thread).toEqual({ restarts: 1 });
      expect(await upstream.metrics.metrics()).toMatch(/^weir_upstream_thread_restarts 1$/m);
    } finally {
      port.close();
      await upstream.dropReplication();
    }
  }, 60_000);

  it("keeps the contract's refusals, refuses calls once closed, and drops its replication after closing", async () => {
    const upstream = await postgresUpstream({
      databaseUrl: db.url,
      tables: ["pulse"],
      slot: "refusals",
      publication: "refusals",
      bufferFile: join(dir, "refusals.sqlite"),
    });
    const source = upstream.source("acme");
    const ahead = await source.changes(10n ** 15n, 10).catch((error: unknown) => error);
    expect(ahead).toBeInstanceOf(UpstreamCallError);
    expect(ahead).toMatchObject({ status: 409, code: "conflict" });
    await expect(source.snapshotPage("nope", null, 10)).rejects.toMatchObject({
      status: 404,
      code: "not_found",
    });
    expect(() => upstream.source("bad namespace!")).toThrow(/a namespace matches/);
    expect(upstream.schema.tables.pulse!.primaryKey).toEqual(["id"]);

    await upstream.close();
    await expect(source.changes(0n, 10)).rejects.toMatchObject({ status: 503, code: "upstream_unavailable" });
    await upstream.close();
    expect(await upstream.dropReplication()).toEqual({ slot: true, publication: true });
    const slots = await db.sql(
      "SELECT count(*)::int AS n FROM pg_replication_slots WHERE slot_name = 'refusals'",
    );
    expect(slots.rows[0].n).toBe(0);
  });

  it("fails to start as it does in one thread, naming the fix, and refuses a random function it cannot send", async () => {
    await expect(
      postgresUpstream({ databaseUrl: db.url, tables: ["missing"], bufferFile: join(dir, "missing.sqlite") }),
    ).rejects.toThrow(/missing/);
    await expect(
      postgresUpstream({
        databaseUrl: db.url,
        tables: ["pulse"],
        bufferFile: join(dir, "random.sqlite"),
        random: () => 0,
      }),
    ).rejects.toThrow(/random: needs thread: false/);
  });
});
