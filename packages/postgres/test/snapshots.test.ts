import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startPostgres, type TestPostgres } from "@weir/postgres-testing";
import { UpstreamGoneError } from "@weir/protocol";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postgresUpstream } from "../src/index.js";
import { NamespaceModel, sortByKey, waitFor } from "./namespace-model.js";

let db: TestPostgres;
let dir: string;

beforeAll(async () => {
  db = await startPostgres();
  dir = mkdtempSync(join(tmpdir(), "weir-snapshots-"));
  await db.sql(`CREATE TABLE account (id int PRIMARY KEY, balance int NOT NULL, note text);
    ALTER TABLE account REPLICA IDENTITY FULL;
    INSERT INTO account SELECT i, 100, 'n' || i FROM generate_series(1, 3000) i;
    CREATE TABLE event (id int PRIMARY KEY, v int NOT NULL);
    ALTER TABLE event REPLICA IDENTITY FULL;`);
});

afterAll(async () => {
  await db?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function postgresRows(table: string): Promise<Record<string, unknown>[]> {
  const { rows } = await db.sql(`SELECT * FROM ${table}`);
  return sortByKey(rows, ["id"]);
}

/** Writes until stopped: updates, inserts, deletes and key changes over the whole table. */
async function writeUntil(stop: { done: boolean }, seed: number): Promise<number> {
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  let random = seed;
  const next = (n: number) => {
    random = (random * 1103515245 + 12345) % 2 ** 31;
    return random % n;
  };
  let writes = 0;
  try {
    while (!stop.done) {
      const id = 1 + next(4000);
      switch (next(5)) {
        case 0:
          await client.query("INSERT INTO account VALUES ($1, 1, 'new') ON CONFLICT (id) DO NOTHING", [id]);
          break;
        case 1:
          await client.query("DELETE FROM account WHERE id = $1", [id]);
          break;
        case 2:
          await client.query(
            "UPDATE account SET id = $2 WHERE id = $1 AND NOT EXISTS (SELECT 1 FROM account WHERE id = $2)",
            [id, 4000 + next(2000)],
          );
          break;
        default:
          // Two rows in one transaction, far apart in key order (one page may see neither, one, or both).
          await client.query("BEGIN");
          await client.query("UPDATE account SET balance = balance - 1 WHERE id = $1", [id]);
          await client.query("UPDATE account SET balance = balance + 1 WHERE id = $1", [1 + next(4000)]);
          await client.query("COMMIT");
      }
      writes++;
    }
  } finally {
    await client.end();
  }
  return writes;
}

describe("snapshots", () => {
  it("taken page by page while writes continue, then caught up from the first page's watermark, converge to PostgreSQL", async () => {
    const upstream = await postgresUpstream({
      databaseUrl: db.url,
      tables: ["account"],
      slot: "converge",
      publication: "converge",
      bufferFile: join(dir, "converge.sqlite"),
    });
    try {
      const stop = { done: false };
      const writers = [writeUntil(stop, 1), writeUntil(stop, 2), writeUntil(stop, 3)];
      const model = new NamespaceModel({ account: ["id"] });
      // Small pages, so the writes land between them.
      await model.snapshot(upstream.source("x"), ["account"], 40);
      stop.done = true;
      const writes = (await Promise.all(writers)).reduce((a, b) => a + b, 0);
      expect(writes).toBeGreaterThan(50);
      const { rows } = await db.sql("SELECT pg_current_wal_lsn()::text AS lsn");
      const [high, low] = (rows[0].lsn as string).split("/");
      const end = (BigInt(`0x${high}`) << 32n) | BigInt(`0x${low}`);
      await waitFor(
        async () => BigInt((await upstream.status()).buffer.newestWatermark) >= end - 1000n,
        30_000,
      );
      await waitFor(
        async () => {
          await model.catchUp(upstream.source("x"));
          return JSON.stringify(model.rows("account")) === JSON.stringify(await postgresRows("account"));
        },
        30_000,
        "the model to converge",
      );
      expect(model.rows("account")).toEqual(await postgresRows("account"));
    } finally {
      await upstream.dropReplication();
    }
  });

  it("past retention answer 410 gone with the oldest watermark, and a fresh snapshot converges", async () => {
    const upstream = await postgresUpstream({
      databaseUrl: db.url,
      tables: ["event"],
      slot: "retention",
      publication: "retention",
      bufferFile: join(dir, "retention.sqlite"),
      retention: { maxChanges: 10 },
    });
    try {
      const source = upstream.source("x");
      const model = new NamespaceModel({ event: ["id"] });
      await model.snapshot(source, ["event"]);
      const stale = model.watermark;
      for (let i = 1; i <= 30; i++) await db.sql("INSERT INTO event VALUES ($1, $1)", [i]);
      await db.sql("UPDATE event SET v = 0 WHERE id <= 5");
      await waitFor(
        async () =>
          (await upstream.status()).buffer.changes <= 10 &&
          (await upstream.status()).committed.transactions >= 31,
      );
      const status = await upstream.status();
      expect(status.buffer.changes).toBeLessThanOrEqual(10);
      expect(BigInt(status.buffer.oldestWatermark)).toBeGreaterThan(stale);

      const gone = await source.changes(stale, 100).catch((error: unknown) => error);
      expect(gone).toBeInstanceOf(UpstreamGoneError);
      expect(gone).toMatchObject({
        status: 410,
        code: "gone",
        oldest: BigInt(status.buffer.oldestWatermark),
      });

      const fresh = new NamespaceModel({ event: ["id"] });
      await fresh.snapshot(source, ["event"], 7);
      expect(fresh.rows("event")).toEqual(await postgresRows("event"));
      expect(fresh.rows("event")).toHaveLength(30);
    } finally {
      await upstream.dropReplication();
    }
  });
});
