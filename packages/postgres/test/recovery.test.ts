import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startPostgres, type TestPostgres } from "@weir/postgres-testing";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postgresUpstream } from "../src/index.js";
import { waitFor } from "./namespace-model.js";

const READER = fileURLToPath(new URL("./fixtures/reader-process.mjs", import.meta.url));

let db: TestPostgres;
let dir: string;
const children: ChildProcess[] = [];

beforeAll(async () => {
  db = await startPostgres();
  dir = mkdtempSync(join(tmpdir(), "weir-recovery-"));
  await db.sql(`CREATE TABLE log (tx int NOT NULL, i int NOT NULL, PRIMARY KEY (tx, i));
    ALTER TABLE log REPLICA IDENTITY FULL;
    CREATE TABLE pulse (id int PRIMARY KEY, n int NOT NULL);
    ALTER TABLE pulse REPLICA IDENTITY FULL;`);
});

afterAll(async () => {
  for (const child of children) child.kill("SIGKILL");
  await db?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Starts the reader process and answers its server's URL once it streams. */
function startReader(env: Record<string, string>): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [READER], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    let out = "";
    let err = "";
    child.stderr!.on("data", (chunk) => {
      err += chunk;
    });
    child.stdout!.on("data", (chunk) => {
      out += chunk;
      const line = out.split("\n").find((l) => l.startsWith("{"));
      if (line) resolve({ child, url: (JSON.parse(line) as { url: string }).url });
    });
    child.on("exit", (code) => reject(new Error(`reader exited with ${code}: ${err}`)));
  });
}

async function getJson<T>(url: string): Promise<T> {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

interface Change {
  watermark: number;
  op: string;
  rowData: { tx: number; i: number };
}

describe("a crash of the reader", () => {
  it("loses and repeats nothing: SIGKILL mid-stream, restart, and the buffer holds exactly what PostgreSQL committed", async () => {
    const env = { DATABASE_URL: db.url, TABLES: "log", BUFFER_FILE: join(dir, "kill.sqlite") };
    const first = await startReader(env);
    const status = await getJson<{ buffer: { oldestWatermark: number } }>(`${first.url}/status`);
    const floor = status.buffer.oldestWatermark;

    const writer = new pg.Client({ connectionString: db.url });
    await writer.connect();
    const TRANSACTIONS = 240;
    // Every 40th transaction is large, so the reader also dies while writing one in parts.
    const size = (tx: number) => (tx % 40 === 0 ? 12_000 : 1 + (tx % 7));
    let killed = false;
    for (let tx = 1; tx <= TRANSACTIONS; tx++) {
      await writer.query("INSERT INTO log SELECT $1, i FROM generate_series(1, $2) i", [tx, size(tx)]);
      if (!killed && tx >= 60) {
        const { committed } = await getJson<{ committed: { transactions: number } }>(`${first.url}/status`);
        if (committed.transactions >= 30 || tx >= 100) {
          first.child.kill("SIGKILL");
          killed = true;
        }
      }
    }
    await writer.end();
    expect(killed).toBe(true);

    const second = await startReader(env);
    const expected = (await db.sql("SELECT count(*)::int AS n FROM log")).rows[0].n as number;
    const seen: Change[] = [];
    await waitFor(
      async () => {
        seen.length = 0;
        let watermark = floor;
        for (;;) {
          const page = await getJson<{ watermark: number; changes: Change[] }>(
            `${second.url}/x/changes?watermark=${watermark}&limit=100000`,
          );
          seen.push(...page.changes);
          if (page.watermark === watermark) break;
          watermark = page.watermark;
        }
        return seen.length >= expected;
      },
      60_000,
      "the restarted reader to catch up",
    );
    second.child.kill("SIGTERM");

    // Exactly the committed rows, each once, each transaction under one watermark of its own.
    expect(seen).toHaveLength(expected);
    expect(new Set(seen.map((c) => `${c.rowData.tx}/${c.rowData.i}`)).size).toBe(expected);
    const watermarkOf = new Map<number, Set<number>>();
    for (const change of seen) {
      expect(change.op).toBe("INSERT");
      const set = watermarkOf.get(change.rowData.tx) ?? new Set();
      set.add(change.watermark);
      watermarkOf.set(change.rowData.tx, set);
    }
    expect(watermarkOf.size).toBe(TRANSACTIONS);
    for (let tx = 1; tx <= TRANSACTIONS; tx++) {
      expect(watermarkOf.get(tx)!.size).toBe(1);
      expect(seen.filter((c) => c.rowData.tx === tx)).toHaveLength(size(tx));
    }
    // And in commit order.
    const order = seen.map((c) => c.rowData.tx).filter((tx, i, all) => i === 0 || all[i - 1] !== tx);
    expect(order).toEqual(Array.from({ length: TRANSACTIONS }, (_, i) => i + 1));
  });
});

describe.skipIf(Boolean(process.env.WEIR_TEST_DATABASE_URL))("PostgreSQL restarted under the reader", () => {
  it("reconnects with the retry rules, counts the attempts, and goes on without a gap", async () => {
    const upstream = await postgresUpstream({
      databaseUrl: db.url,
      tables: ["pulse"],
      slot: "restart",
      publication: "restart",
      bufferFile: join(dir, "restart.sqlite"),
      random: () => 0,
      thread: false,
    });
    try {
      const source = upstream.source("x");
      const start = BigInt((await upstream.status()).buffer.newestWatermark);
      await db.sql("INSERT INTO pulse VALUES (1, 1)");
      await waitFor(async () => (await source.changes(start, 10)).changes.length === 1);

      db.stopServer();
      await waitFor(
        async () => (await upstream.status()).reconnect.failures >= 1,
        10_000,
        "the reader to notice",
      );
      expect((await upstream.status()).state).toBe("reconnecting");
      // While PostgreSQL is down, what is buffered is still served; snapshots are 503.
      expect((await source.changes(start, 10)).changes).toHaveLength(1);
      await expect(source.snapshotPage("pulse", null, 10)).rejects.toMatchObject({ status: 503 });
      // Attempts 1, 2, 3 wait 1 s, 2 s, 4 s (no jitter here): after 2.5 s down, at least two failed.
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      expect((await upstream.status()).reconnect.attempts).toBeGreaterThanOrEqual(2);
      db.startServer();

      await waitFor(
        async () => (await upstream.status()).state === "streaming",
        20_000,
        "the reader to reconnect",
      );
      const status = await upstream.status();
      expect(status.reconnect.attempts).toBe(0);
      expect(status.reconnect.failures).toBeGreaterThanOrEqual(2);
      await db.sql("INSERT INTO pulse VALUES (2, 2)");
      await waitFor(async () => (await source.changes(start, 10)).changes.length === 2);
      const { changes } = await source.changes(start, 10);
      expect(changes.map((c) => c.rowData)).toEqual([
        { id: 1, n: 1 },
        { id: 2, n: 2 },
      ]);
    } finally {
      await upstream.close();
    }
  });
});
