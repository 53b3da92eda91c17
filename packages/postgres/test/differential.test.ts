import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createServer, type WeirServer } from "@weir/node-host";
import { startPostgres, type TestPostgres } from "@weir/postgres-testing";
import fc from "fast-check";
import { afterAll, beforeAll, describe, it } from "vitest";
import { type PostgresUpstream, postgresUpstream } from "../src/index.js";
import { sortByKey, waitFor } from "./namespace-model.js";
import { canonicalJson, SyncedClient } from "./synced-client.js";

// A seeded random workload against PostgreSQL: writes with values at their types' edges, and
// schema changes mid-stream (each followed the documented way: restart the upstream and weir
// with its schema). At quiescence every namespace's client holds exactly what a fresh snapshot
// of PostgreSQL reads. WEIR_SEED replays a run.

const ADMIN_KEY = "admin-key-differential";
const ORGS = ["a", "b", "c"];
const IDS = 40;

const EDGES = {
  big: [
    "0",
    "-1",
    "2147483648",
    "9007199254740991",
    "9007199254740993",
    "-9223372036854775808",
    "9223372036854775807",
  ],
  f: ["0", "-0", "1e-300", "1.7976931348623157e308", "0.30000000000000004", "5e-324", "-2.5"],
  t: ["", "✓ ünïcode 🙂", 'it\'s "quoted"', "x".repeat(5_000), "line\nbreak"],
  j: [null, "{}", "[]", '{"a": [1, 2.5, null], "b": {"c": "d"}}', '"text"', "12.5"],
  b: [null, "\\x", "\\x00ff10"],
  ts: [null, "2024-05-01 10:20:30.123456+02", "1970-01-01 00:00:00+00", "infinity", "-infinity"],
} as const;

type Operation =
  | { kind: "upsert"; id: number; org: number; values: Record<string, string | null> }
  | { kind: "update"; id: number; column: keyof typeof EDGES; value: string | null }
  | { kind: "move"; id: number; org: number }
  | { kind: "delete"; id: number };

const value = (column: keyof typeof EDGES) => fc.constantFrom<string | null>(...EDGES[column]);
const operation: fc.Arbitrary<Operation> = fc.oneof(
  fc.record({
    kind: fc.constant("upsert" as const),
    id: fc.nat(IDS - 1),
    org: fc.nat(ORGS.length - 1),
    values: fc.record({
      big: value("big"),
      f: value("f"),
      t: value("t"),
      j: value("j"),
      b: value("b"),
      ts: value("ts"),
    }),
  }),
  fc
    .record({
      kind: fc.constant("update" as const),
      id: fc.nat(IDS - 1),
      column: fc.constantFrom(...(Object.keys(EDGES) as (keyof typeof EDGES)[])),
      value: fc.constant(null),
    })
    .chain((op) => value(op.column).map((v) => ({ ...op, value: v }))),
  fc.record({ kind: fc.constant("move" as const), id: fc.nat(IDS - 1), org: fc.nat(ORGS.length - 1) }),
  fc.record({ kind: fc.constant("delete" as const), id: fc.nat(IDS - 1) }),
);

/** Schema changes, one of which comes after each part of the workload. */
const CHANGES = [
  "ALTER TABLE item ADD COLUMN extra text DEFAULT 'dflt'",
  "ALTER TABLE item ALTER COLUMN f TYPE real",
  "ALTER TABLE item DROP COLUMN t",
  "ALTER TABLE item ALTER COLUMN big TYPE numeric",
  "ALTER TABLE item DROP COLUMN extra; ALTER TABLE item ADD COLUMN extra text",
];

let db: TestPostgres;
let dir: string;
let upstream: PostgresUpstream | null = null;
let weir: WeirServer | null = null;
let url = "";

async function start(): Promise<PostgresUpstream> {
  const current = await postgresUpstream({
    databaseUrl: db.url,
    tables: ["item"],
    tenant: { column: "org" },
    bufferFile: join(dir, "buffer.sqlite"),
    onCommit: (namespaces) => weir?.host?.upstreamCommitted(namespaces),
  });
  upstream = current;
  weir = createServer({
    schema: current.schema,
    mutators: {},
    upstream: { source: (namespace) => current.source(namespace) },
    adminKey: ADMIN_KEY,
    devAuth: true,
    dataDir: join(dir, "data"),
    logger: { log() {} },
  });
  url = (await weir.listen()).url;
  return current;
}

async function stop(): Promise<void> {
  await weir?.close();
  await upstream?.close();
  weir = null;
  upstream = null;
}

/** What a fresh snapshot of PostgreSQL reads for the namespace, in weir's encoding. */
async function snapshotRows(source: PostgresUpstream, org: string): Promise<Record<string, unknown>[]> {
  const rows: Record<string, unknown>[] = [];
  let cursor: string | null = null;
  do {
    const page = await source.source(org).snapshotPage("item", cursor, 1_000);
    // bytea: the upstream contract sends base64, weir's clients receive hex (the engine's bytes).
    rows.push(
      ...page.rows.map((row) =>
        typeof row.b === "string" ? { ...row, b: Buffer.from(row.b, "base64").toString("hex") } : row,
      ),
    );
    cursor = page.nextCursor;
  } while (cursor !== null);
  return sortByKey(rows, ["id"]);
}

/** A statement PostgreSQL may refuse: a value or a change its types do not take (nothing changes then). */
async function tolerated(run: Promise<unknown>): Promise<void> {
  await run.catch((error) => {
    if (!/does not exist|invalid input|out of range|overflow/.test((error as Error).message)) throw error;
  });
}

async function apply(op: Operation): Promise<void> {
  switch (op.kind) {
    case "upsert": {
      // Only the columns the table still has (a schema change may have dropped some).
      const { rows } = await db.sql(
        "SELECT attname FROM pg_attribute WHERE attrelid = 'item'::regclass AND attnum > 0 AND NOT attisdropped",
      );
      const present = new Set(rows.map((row) => row.attname as string));
      const columns = Object.entries(op.values).filter(([column]) => present.has(column));
      const names = ["id", "org", ...columns.map(([column]) => column)];
      const params = [op.id, ORGS[op.org], ...columns.map(([, v]) => v)];
      const placeholders = names.map((_, i) => `$${i + 1}`);
      const updates = names.slice(1).map((name) => `${name} = EXCLUDED.${name}`);
      await tolerated(
        db.sql(
          `INSERT INTO item (${names.join(", ")}) VALUES (${placeholders.join(", ")}) ON CONFLICT (id) DO UPDATE SET ${updates.join(", ")}`,
          params,
        ),
      );
      return;
    }
    case "update":
      await tolerated(db.sql(`UPDATE item SET ${op.column} = $2 WHERE id = $1`, [op.id, op.value]));
      return;
    case "move":
      await db.sql("UPDATE item SET org = $2 WHERE id = $1", [op.id, ORGS[op.org]]);
      return;
    case "delete":
      await db.sql("DELETE FROM item WHERE id = $1", [op.id]);
  }
}

beforeAll(async () => {
  db = await startPostgres();
  dir = mkdtempSync(join(tmpdir(), "weir-differential-"));
  mkdirSync(join(dir, "data"));
  await db.sql(`CREATE TABLE item (id int PRIMARY KEY, org text NOT NULL, big bigint, f double precision,
      t text, j jsonb, b bytea, ts timestamptz);
    ALTER TABLE item REPLICA IDENTITY FULL;`);
});

afterAll(async () => {
  await stop();
  await db?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const seed = Number(process.env.WEIR_SEED ?? Math.floor(Math.random() * 2 ** 31));

describe("differential", () => {
  it(`every namespace equals a fresh snapshot of PostgreSQL under a random workload with schema changes (seed ${seed})`, async () => {
    const [plan] = fc.sample(
      fc.record({
        parts: fc.array(fc.array(operation, { minLength: 20, maxLength: 60 }), {
          minLength: 3,
          maxLength: 3,
        }),
        changes: fc.shuffledSubarray(CHANGES, { minLength: 2, maxLength: 2 }),
      }),
      { seed, numRuns: 1 },
    );
    const clients = ORGS.map((org) => new SyncedClient(org, ADMIN_KEY));
    let source = await start();
    for (const [index, part] of plan!.parts.entries()) {
      for (const op of part) await apply(op);
      // Clients sync between parts too, so that a change lands on replicas that hold rows.
      for (const client of clients) await client.ingestAndPull(url);
      const change = plan!.changes[index];
      if (change === undefined) continue;
      await tolerated(db.sql(change));
      await stop();
      source = await start();
    }
    for (const client of clients) {
      let last = "";
      await waitFor(
        async () => {
          await client.ingestAndPull(url);
          const expected = canonicalJson(await snapshotRows(source, client.namespace));
          const held = canonicalJson(sortByKey(client.rows("item"), ["id"]));
          last = `${held.slice(0, 400)}\nvs\n${expected.slice(0, 400)}`;
          return held === expected;
        },
        30_000,
        `namespace ${client.namespace} to equal PostgreSQL (replay with WEIR_SEED=${seed})`,
      ).catch((error) => {
        throw new Error(`${(error as Error).message}:\n${last}`);
      });
    }
  }, 240_000);
});
