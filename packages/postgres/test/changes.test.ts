import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startPostgres, type TestPostgres } from "@weir/postgres-testing";
import { parse, UpstreamChangesResponse, UpstreamGone, UpstreamSnapshotResponse } from "@weir/protocol";
import type { UpstreamServer } from "@weir/upstream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type PostgresUpstream, postgresUpstream, serveUpstream } from "../src/index.js";
import { NamespaceModel, sortByKey, waitFor } from "./namespace-model.js";

let db: TestPostgres;
let dir: string;
let upstream: PostgresUpstream;
let server: UpstreamServer;
let url: string;
const TOKEN = "secret-token";

beforeAll(async () => {
  db = await startPostgres();
  dir = mkdtempSync(join(tmpdir(), "weir-changes-"));
  await db.sql(`CREATE TABLE item (id int PRIMARY KEY, title text NOT NULL, done boolean NOT NULL DEFAULT false);
    CREATE TABLE big (id int PRIMARY KEY, n int NOT NULL);
    ALTER TABLE item REPLICA IDENTITY FULL; ALTER TABLE big REPLICA IDENTITY FULL;
    INSERT INTO item SELECT i, 'item ' || i FROM generate_series(1, 25) i;`);
  upstream = await postgresUpstream({
    databaseUrl: db.url,
    tables: ["item", "big"],
    bufferFile: join(dir, "buffer.sqlite"),
  });
  server = serveUpstream(upstream, { token: TOKEN });
  ({ url } = await server.listen());
});

afterAll(async () => {
  await server?.close();
  await upstream?.close();
  await db?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

// biome-ignore lint/suspicious/noExplicitAny: answers are checked field by field
type Answer = any;

async function get(path: string, token: string | null = TOKEN): Promise<{ status: number; body: Answer }> {
  const response = await fetch(`${url}${path}`, {
    headers: token ? { authorization: `Bearer ${token}` } : {},
  });
  return { status: response.status, body: await response.json() };
}

async function head(): Promise<bigint> {
  const status = await upstream.status();
  return BigInt(status.buffer.newestWatermark);
}

describe("the change stream through the upstream contract", () => {
  it("serves a snapshot, then inserts, updates (a primary key change too), deletes and truncate in commit order", async () => {
    const source = upstream.source("app");
    const model = new NamespaceModel({ item: ["id"], big: ["id"] });
    await model.snapshot(source, ["item"], 10);
    expect(model.rows("item")).toHaveLength(25);
    expect(model.rows("item")[0]).toEqual({ id: 1, title: "item 1", done: false });

    const before = await head();
    await db.sql("INSERT INTO item VALUES (100, 'new', false)");
    await db.sql("UPDATE item SET done = true WHERE id = 2");
    await db.sql("UPDATE item SET id = 200 WHERE id = 3");
    await db.sql("DELETE FROM item WHERE id = 4");
    await waitFor(async () => (await head()) > before, 20_000, "the buffer to move");
    await waitFor(async () => {
      const page = await source.changes(model.watermark, 1000);
      return page.changes.length >= 4;
    });
    const page = await source.changes(model.watermark, 1000);
    expect(page.changes.map(({ watermark: _, ...change }) => change)).toEqual([
      { tableName: "item", op: "INSERT", rowData: { id: 100, title: "new", done: false }, oldData: null },
      { tableName: "item", op: "UPDATE", rowData: { id: 2, title: "item 2", done: true }, oldData: null },
      {
        tableName: "item",
        op: "UPDATE",
        rowData: { id: 200, title: "item 3", done: false },
        oldData: { id: 3 },
      },
      { tableName: "item", op: "DELETE", rowData: null, oldData: { id: 4 } },
    ]);
    // One watermark per transaction, growing with each commit.
    const watermarks = page.changes.map((change) => change.watermark);
    expect(new Set(watermarks).size).toBe(4);
    expect([...watermarks].sort((a, b) => (a < b ? -1 : 1))).toEqual(watermarks);
    // The page stands past its last commit: at most up to where that commit's record ends.
    expect(page.watermark).toBeGreaterThanOrEqual(watermarks[3]!);
    // Reading again from the same watermark answers the same changes.
    expect(await source.changes(model.watermark, 1000)).toEqual(page);

    await model.catchUp(source);
    const { rows } = await db.sql("SELECT id, title, done FROM item ORDER BY id");
    expect(model.rows("item")).toEqual(sortByKey(rows, ["id"]));

    await db.sql("TRUNCATE item");
    await waitFor(async () => (await source.changes(model.watermark, 10)).changes.length > 0);
    const truncate = await source.changes(model.watermark, 10);
    expect(truncate.changes).toEqual([
      { watermark: expect.any(BigInt), tableName: "item", op: "TRUNCATE", rowData: null, oldData: null },
    ]);
    expect(truncate.watermark).toBeGreaterThanOrEqual(truncate.changes[0]!.watermark);
    model.apply(truncate.changes[0]!);
    expect(model.rows("item")).toEqual([]);
  });

  it("delivers a 100,000-row transaction whole in one answer, whatever the limit", async () => {
    const source = upstream.source("app");
    const from = await head();
    await db.sql("INSERT INTO big SELECT i, i * 2 FROM generate_series(1, 100000) i");
    await db.sql("INSERT INTO big VALUES (100001, 0)");
    await waitFor(
      async () => (await source.changes(from, 1)).changes.length > 0,
      60_000,
      "the large transaction",
    );
    const first = await source.changes(from, 10);
    expect(first.changes).toHaveLength(100_000);
    expect(new Set(first.changes.map((change) => change.watermark))).toEqual(new Set([first.watermark]));
    expect(first.changes[99_999]).toMatchObject({ op: "INSERT", rowData: { id: 100000, n: 200000 } });
    // The next transaction is the next answer: an answer never ends inside a transaction.
    await waitFor(async () => (await source.changes(first.watermark, 10)).changes.length > 0);
    const second = await source.changes(first.watermark, 10);
    expect(second.changes.map((change) => change.rowData)).toEqual([{ id: 100001, n: 0 }]);
  });

  it("answers the same over HTTP, watermarks as JSON numbers, with the bearer token checked", async () => {
    const from = await head();
    await db.sql("INSERT INTO item VALUES (300, 'over http', true)");
    await waitFor(async () => (await head()) > from);
    const changes = await get(`/tenant-a/changes?watermark=${from}&limit=50`);
    expect(changes.status).toBe(200);
    expect(changes.body.watermark).toBeGreaterThanOrEqual(Number(await head()));
    expect(changes.body).toEqual({
      watermark: changes.body.watermark,
      changes: [
        {
          watermark: Number(await head()),
          tableName: "item",
          op: "INSERT",
          rowData: { id: 300, title: "over http", done: true },
          oldData: null,
        },
      ],
    });
    expect(parse(UpstreamChangesResponse, changes.body).ok).toBe(true);
    const caughtUp = await get(`/tenant-a/changes?watermark=${changes.body.watermark}&limit=50`);
    // Nothing new; a keepalive in between may have moved the position on, never back.
    expect(caughtUp.body.changes).toEqual([]);
    expect(caughtUp.body.watermark).toBeGreaterThanOrEqual(changes.body.watermark);

    const snapshot = await get("/tenant-a/snapshot?table=item&limit=1");
    expect(snapshot.status).toBe(200);
    expect(snapshot.body.rows).toEqual([{ id: 300, title: "over http", done: true }]);
    expect(typeof snapshot.body.watermark).toBe("number");
    expect(snapshot.body.nextCursor).toEqual(expect.any(String));
    expect(parse(UpstreamSnapshotResponse, snapshot.body).ok).toBe(true);
    const last = await get(`/tenant-a/snapshot?table=item&limit=1&cursor=${snapshot.body.nextCursor}`);
    expect(last.body).toMatchObject({ rows: [], nextCursor: null });

    expect((await get("/tenant-a/changes?watermark=0&limit=5", null)).status).toBe(401);
    expect((await get("/tenant-a/changes?watermark=0&limit=5", "wrong")).status).toBe(401);
  });

  it("refuses bad input with a 4xx naming the problem, and changes nothing", async () => {
    const cases: [string, number, string][] = [
      ["/a/changes?limit=5", 400, "watermark"],
      ["/a/changes?watermark=-1&limit=5", 400, "watermark"],
      ["/a/changes?watermark=1.5&limit=5", 400, "watermark"],
      ["/a/changes?watermark=99999999999999999999999&limit=5", 400, "watermark"],
      ["/a/changes?watermark=1&limit=0", 400, "limit"],
      ["/a/changes?watermark=1&limit=100000000", 400, "limit"],
      ["/a/snapshot?limit=5", 400, "table"],
      ["/a/snapshot?table=nope&limit=5", 404, "unknown table nope"],
      ["/a/snapshot?table=item&limit=5&cursor=garbage", 400, "cursor"],
      [`/a/changes?watermark=${(await head()) + (1n << 40n)}&limit=5`, 409, "ahead"],
      ["/a/other", 404, "no route"],
      ["/a/b/c", 404, "no route"],
    ];
    for (const [path, status, message] of cases) {
      const answer = await get(path);
      expect({ path, status: answer.status }).toEqual({ path, status });
      expect(answer.body.message).toContain(message);
      expect(answer.body.error).toEqual(expect.any(String));
    }
    const post = await fetch(`${url}/a/changes?watermark=0&limit=1`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(post.status).toBe(405);
  });

  it("answers 410 gone with the oldest watermark for a cursor below the floor", async () => {
    const status = await upstream.status();
    const answer = await get(`/a/changes?watermark=${BigInt(status.buffer.oldestWatermark) - 1n}&limit=5`);
    expect(answer.status).toBe(410);
    expect(answer.body).toMatchObject({ error: "gone", oldest: status.buffer.oldestWatermark });
    expect(parse(UpstreamGone, answer.body).ok).toBe(true);
  });
});
