import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startPostgres, type TestPostgres } from "@weir/postgres-testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postgresUpstream } from "../src/index.js";
import { waitFor } from "./namespace-model.js";

let db: TestPostgres;
let dir: string;

beforeAll(async () => {
  db = await startPostgres();
  dir = mkdtempSync(join(tmpdir(), "weir-types-"));
  await db.sql(`CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');
    CREATE DOMAIN short_text AS varchar(10);
    CREATE TABLE typed (
      id bigint PRIMARY KEY, small smallint, regular integer, exact numeric(30, 10), real4 real,
      real8 double precision, flag boolean, label text, code varchar(5), fixed char(3), uid uuid,
      doc json, docb jsonb, data bytea, at timestamptz, local timestamp, day date, feeling mood,
      nick short_text, tags text[], grid int[][], addr inet, span interval, big_text text);
    ALTER TABLE typed REPLICA IDENTITY FULL;
    CREATE TABLE odd (id int PRIMARY KEY, spot point);
    ALTER TABLE odd REPLICA IDENTITY FULL;
    CREATE TABLE plain (id int PRIMARY KEY, v text);
    CREATE TABLE drifting (id int PRIMARY KEY, v text, w int);
    ALTER TABLE drifting REPLICA IDENTITY FULL;`);
});

afterAll(async () => {
  await db?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const INSERT = `INSERT INTO typed VALUES (
  9007199254740993, -32768, 2147483647, 12345678901234567890.0123456789, 1.5, 0.1, true, 'text ✓', 'abc',
  'ab', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '{"b": [1, 2.5, null], "a": "x"}', '{"k": {"n": 1}}',
  '\\x00ff10', '2024-05-01 10:20:30.123456+02', '2024-05-01 10:20:30.5', '2024-05-01', 'happy', 'short',
  ARRAY['a', 'b,c', NULL, '"q"'], '{{1,2},{3,4}}', '192.168.0.1/24', '1 day 02:00:00', NULL)`;

const EXPECTED = {
  id: "9007199254740993",
  small: -32768,
  regular: 2147483647,
  exact: "12345678901234567890.0123456789",
  real4: 1.5,
  real8: 0.1,
  flag: true,
  label: "text ✓",
  code: "abc",
  fixed: "ab ",
  uid: "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
  doc: { b: [1, 2.5, null], a: "x" },
  docb: { k: { n: 1 } },
  data: Buffer.from([0x00, 0xff, 0x10]).toString("base64"),
  at: "2024-05-01T08:20:30.123456Z",
  local: "2024-05-01T10:20:30.5",
  day: "2024-05-01",
  feeling: "happy",
  nick: "short",
  tags: ["a", "b,c", null, '"q"'],
  grid: [
    [1, 2],
    [3, 4],
  ],
  addr: "192.168.0.1/24",
  span: "1 day 02:00:00",
  big_text: null,
};

describe("types", () => {
  it("round trip the same through snapshots and changes, and declare weir's column types", async () => {
    const upstream = await postgresUpstream({
      databaseUrl: db.url,
      tables: ["typed"],
      slot: "types",
      publication: "types",
      bufferFile: join(dir, "types.sqlite"),
    });
    try {
      // Every column but the key may be NULL in PostgreSQL, so weir's is nullable too.
      expect(upstream.schema.tables.typed).toEqual({
        primaryKey: ["id"],
        columns: {
          id: "integer",
          small: { type: "integer", nullable: true },
          regular: { type: "integer", nullable: true },
          exact: { type: "string", nullable: true },
          real4: { type: "number", nullable: true },
          real8: { type: "number", nullable: true },
          flag: { type: "boolean", nullable: true },
          label: { type: "string", nullable: true },
          code: { type: "string", nullable: true },
          fixed: { type: "string", nullable: true },
          uid: { type: "string", nullable: true },
          doc: { type: "json", nullable: true },
          docb: { type: "json", nullable: true },
          data: { type: "bytes", nullable: true },
          at: { type: "string", nullable: true },
          local: { type: "string", nullable: true },
          day: { type: "string", nullable: true },
          feeling: { type: "string", nullable: true },
          nick: { type: "string", nullable: true },
          tags: { type: "json", nullable: true },
          grid: { type: "json", nullable: true },
          addr: { type: "string", nullable: true },
          span: { type: "string", nullable: true },
          big_text: { type: "string", nullable: true },
        },
      });
      const source = upstream.source("x");
      const start = BigInt((await upstream.status()).buffer.newestWatermark);
      await db.sql(INSERT);
      await waitFor(async () => (await source.changes(start, 10)).changes.length === 1);
      const [inserted] = (await source.changes(start, 10)).changes;
      expect(inserted!.rowData).toEqual(EXPECTED);
      const page = await source.snapshotPage("typed", null, 10);
      expect(page.rows).toEqual([EXPECTED]);

      // A large value stored out of line (TOAST) that an update leaves alone still arrives whole.
      const large = "x".repeat(100_000);
      await db.sql("UPDATE typed SET big_text = $1", [large]);
      await db.sql("UPDATE typed SET flag = false");
      await waitFor(async () => (await source.changes(start, 10)).changes.length === 3);
      const [, , update] = (await source.changes(start, 10)).changes;
      expect(update!.rowData).toMatchObject({ flag: false, big_text: large });
    } finally {
      await upstream.dropReplication();
    }
  });

  it("refuses at start a column weir cannot carry, naming it, and a table without REPLICA IDENTITY FULL", async () => {
    const attempt = postgresUpstream({
      databaseUrl: db.url,
      tables: ["odd", "plain"],
      slot: "refused",
      publication: "refused",
      bufferFile: join(dir, "refused.sqlite"),
    });
    await expect(attempt).rejects.toThrow(/column odd\.spot has type point, which weir does not support/);
    await expect(attempt).rejects.toThrow(/table plain needs REPLICA IDENTITY FULL/);
    // A column list without the unsupported column is followed.
    const subset = await postgresUpstream({
      databaseUrl: db.url,
      tables: { odd: { columns: ["id"] } },
      slot: "subset",
      publication: "subset",
      bufferFile: join(dir, "subset.sqlite"),
    });
    expect(subset.schema.tables.odd!.columns).toEqual({ id: "integer" });
    await subset.dropReplication();
  });
});

describe("schema drift", () => {
  it("stops the reader before the changed transaction, naming the table and column, and buffers nothing of it", async () => {
    const upstream = await postgresUpstream({
      databaseUrl: db.url,
      tables: ["drifting"],
      slot: "drift",
      publication: "drift",
      bufferFile: join(dir, "drift.sqlite"),
    });
    try {
      const source = upstream.source("x");
      const start = BigInt((await upstream.status()).buffer.newestWatermark);
      await db.sql("INSERT INTO drifting VALUES (1, 'a', 1)");
      await waitFor(async () => (await source.changes(start, 10)).changes.length === 1);
      await db.sql("ALTER TABLE drifting ALTER COLUMN w TYPE bigint");
      await db.sql("INSERT INTO drifting VALUES (2, 'b', 2)");
      await waitFor(async () => (await upstream.status()).state === "drift", 20_000, "drift");
      const status = await upstream.status();
      expect(status.drift).toEqual({
        table: "drifting",
        column: "w",
        kind: "retyped",
        message: expect.stringContaining("column drifting.w changed type upstream"),
      });
      expect(status.lastError).toContain("drifting.w");
      expect((await source.changes(start, 10)).changes).toHaveLength(1);
      const metrics = await upstream.metrics.metrics();
      expect(metrics).toContain("weir_upstream_schema_drift 1");
    } finally {
      await upstream.close();
    }

    // A dropped column that is sent is drift too; restarted with options that match, it goes on
    // from the transaction it stopped at.
    await db.sql("ALTER TABLE drifting DROP COLUMN w");
    const again = await postgresUpstream({
      databaseUrl: db.url,
      tables: { drifting: { columns: ["id", "v"] } },
      slot: "drift",
      publication: "drift",
      bufferFile: join(dir, "drift.sqlite"),
    });
    try {
      const status = await again.status();
      // The column set changed, so the buffered changes were dropped (namespaces resnapshot).
      expect(status.buffer.resetReason).toContain("changed");
      const floor = BigInt(status.buffer.oldestWatermark);
      await waitFor(async () => (await again.source("x").changes(floor, 10)).changes.length === 1);
      expect((await again.source("x").changes(floor, 10)).changes[0]!.rowData).toEqual({ id: 2, v: "b" });
    } finally {
      await again.dropReplication();
    }
  });
});
