import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createServer, type WeirServer } from "@weir/node-host";
import { startPostgres, type TestPostgres } from "@weir/postgres-testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type PostgresUpstream, postgresUpstream } from "../src/index.js";
import { expectConverged, tenantRows } from "./converged.js";
import { SyncedClient } from "./synced-client.js";

// Schema changes in PostgreSQL, followed the documented way (the upstream and weir restarted,
// weir's schema taken from the upstream's): every namespace ends with exactly what PostgreSQL
// holds, in the clients that were synced before the change too.

const ADMIN_KEY = "admin-key-schema-changes";
const ORGS = ["a", "b", "c"];

let db: TestPostgres;
let dir: string;
let upstream: PostgresUpstream | null = null;
let weir: WeirServer | null = null;
let url = "";
const logged: Record<string, unknown>[] = [];

async function start(tables: string[]): Promise<void> {
  const current = await postgresUpstream({
    databaseUrl: db.url,
    tables,
    tenant: { column: "org" },
    bufferFile: join(dir, "buffer.sqlite"),
    onCommit: (namespaces) => weir?.host?.upstreamCommitted(namespaces),
    logger: { log: (level, fields) => logged.push({ level, ...fields }) },
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
}

async function stop(): Promise<void> {
  await weir?.close();
  await upstream?.close();
  weir = null;
  upstream = null;
}

beforeAll(async () => {
  db = await startPostgres();
  dir = mkdtempSync(join(tmpdir(), "weir-schema-changes-"));
  mkdirSync(join(dir, "data"));
  await db.sql(`CREATE TABLE item (id int PRIMARY KEY, org text NOT NULL, title text, n int, r real);
    ALTER TABLE item REPLICA IDENTITY FULL;
    INSERT INTO item SELECT i, (ARRAY['a','b','c'])[1 + i % 3], 'title ' || i, i, 1.1 FROM generate_series(1, 90) i;`);
});

afterAll(async () => {
  await stop();
  await db?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe("schema changes upstream", () => {
  it("ADD COLUMN with a DEFAULT, DROP, a type change, a new table with rows, a column dropped and added again: every namespace equals a fresh SELECT", async () => {
    const clients = ORGS.map((org) => new SyncedClient(org, ADMIN_KEY));
    await start(["item"]);
    await expectConverged(url, clients, ["item"], (table, ns) => tenantRows(db, table, "org", ns));

    // A change of each kind, written while the upstream runs (its reader stops at the drift),
    // then the restart the docs describe.
    const steps: { sql: string; tables: string[] }[] = [
      { sql: "ALTER TABLE item ADD COLUMN extra text DEFAULT 'dflt'", tables: ["item"] },
      { sql: "ALTER TABLE item DROP COLUMN title", tables: ["item"] },
      { sql: "ALTER TABLE item ALTER COLUMN n TYPE text USING 'n' || n", tables: ["item"] },
      // Same weir type (number), other values: only the upstream's own reset can tell.
      { sql: "ALTER TABLE item ALTER COLUMN r TYPE double precision", tables: ["item"] },
      {
        sql: `CREATE TABLE tag (id int PRIMARY KEY, org text NOT NULL, label text);
          ALTER TABLE tag REPLICA IDENTITY FULL;
          INSERT INTO tag SELECT i, (ARRAY['a','b','c'])[1 + i % 3], 'tag ' || i FROM generate_series(1, 150) i;
          ALTER PUBLICATION weir ADD TABLE tag;`,
        tables: ["item", "tag"],
      },
      // Same name and type: the values are gone all the same.
      {
        sql: "ALTER TABLE item DROP COLUMN extra; ALTER TABLE item ADD COLUMN extra text",
        tables: ["item", "tag"],
      },
    ];
    let id = 1000;
    for (const step of steps) {
      await db.sql(step.sql);
      await db.sql("INSERT INTO item (id, org) VALUES ($1, 'a'), ($2, 'b')", [id++, id++]);
      await db.sql("UPDATE item SET org = org WHERE id % 10 = 0");
      await stop();
      await start(step.tables);
      await expectConverged(url, clients, step.tables, (table, ns) => tenantRows(db, table, "org", ns));
    }
    const resets = logged.filter((line) => line.msg === "buffer reset");
    expect(resets).toHaveLength(steps.length);
    expect(resets[0]).toMatchObject({ level: "warn", reason: expect.stringContaining("columns") });
  });
});
