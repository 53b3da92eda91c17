import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createServer, type WeirServer } from "@weir/node-host";
import { startPostgres, type TestPostgres } from "@weir/postgres-testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type PostgresUpstream, postgresUpstream } from "../src/index.js";
import { expectConverged, tenantRows } from "./converged.js";
import { waitFor } from "./namespace-model.js";
import { SyncedClient } from "./synced-client.js";

// A column added in PostgreSQL while everything runs: the upstream reads the tables again and
// resets its buffer without a restart, and a weir whose schema already declares the column (as
// nullable) takes it without a restart either: every namespace ends with what PostgreSQL holds.

const ADMIN_KEY = "admin-key-added-column";
const ORGS = ["a", "b", "c"];

let db: TestPostgres;
let dir: string;
let upstream: PostgresUpstream;
let weir: WeirServer;
let url = "";
const logged: Record<string, unknown>[] = [];

/** The tenant's rows as PostgreSQL holds them, with `extra` null while the column does not exist. */
/** The org's rows as PostgreSQL holds them; a row from before the column lacks `extra`, as null. */
async function selectRows(table: string, org: string): Promise<Record<string, unknown>[]> {
  return (await tenantRows(db, table, "org", org)).map((row) => ({ extra: null, ...row }));
}

beforeAll(async () => {
  db = await startPostgres();
  dir = mkdtempSync(join(tmpdir(), "weir-added-column-"));
  mkdirSync(join(dir, "data"));
  await db.sql(`CREATE TABLE item (id int PRIMARY KEY, org text NOT NULL, title text);
    ALTER TABLE item REPLICA IDENTITY FULL;
    INSERT INTO item SELECT i, (ARRAY['a','b','c'])[1 + i % 3], 'title ' || i FROM generate_series(1, 90) i;`);
  upstream = await postgresUpstream({
    databaseUrl: db.url,
    tables: ["item"],
    tenant: { column: "org" },
    bufferFile: join(dir, "buffer.sqlite"),
    onCommit: (namespaces) => weir?.host?.upstreamCommitted(namespaces),
    logger: { log: (level, fields) => logged.push({ level, ...fields }) },
  });
  // weir's schema declares the column before PostgreSQL has it.
  const item = upstream.schema.tables.item!;
  weir = createServer({
    schema: {
      tables: { item: { ...item, columns: { ...item.columns, extra: { type: "string", nullable: true } } } },
    },
    mutators: {},
    upstream: { source: (namespace) => upstream.source(namespace) },
    adminKey: ADMIN_KEY,
    devAuth: true,
    dataDir: join(dir, "data"),
    logger: { log() {} },
  });
  url = (await weir.listen()).url;
});

afterAll(async () => {
  await weir?.close();
  await upstream?.close();
  await db?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe("a column added upstream", () => {
  it("ADD COLUMN with a DEFAULT while everything runs: every namespace equals a fresh SELECT, nothing restarted", async () => {
    const clients = ORGS.map((org) => new SyncedClient(org, ADMIN_KEY));
    await expectConverged(url, clients, ["item"], selectRows);
    expect(upstream.schema.tables.item!.columns.extra).toBeUndefined();

    await db.sql("ALTER TABLE item ADD COLUMN extra text DEFAULT 'dflt'");
    // The first change of the table after it shows the new column to the reader.
    await db.sql("INSERT INTO item (id, org, title) VALUES (1000, 'a', 'after')");
    await db.sql("UPDATE item SET title = 'changed', extra = 'own' WHERE id = 3");
    await expectConverged(url, clients, ["item"], selectRows);
    const status = await upstream.status();
    expect(status.state).toBe("streaming");
    expect(status.drift).toBeNull();
    expect(status.buffer.resetReason).toContain("item.extra was added");
    expect(upstream.schema.tables.item!.columns.extra).toEqual({ type: "string", nullable: true });
    expect(logged.filter((line) => line.msg === "buffer reset")).toHaveLength(1);
    expect(logged).toContainEqual(expect.objectContaining({ msg: "column added", column: "extra" }));

    // Later changes flow as before, the new column included.
    await db.sql("UPDATE item SET extra = 'later' WHERE org = 'b' AND id < 20");
    await expectConverged(url, clients, ["item"], selectRows);
  });

  it("a column added with a type weir cannot carry stops the reader as drift, naming it", async () => {
    await db.sql("ALTER TABLE item ADD COLUMN spot point");
    await db.sql("INSERT INTO item (id, org) VALUES (1001, 'c')");
    await waitFor(async () => (await upstream.status()).state === "drift", 20_000, "drift");
    const { drift } = await upstream.status();
    expect(drift).toMatchObject({ table: "item", column: "spot", kind: "added" });
    expect(drift!.message).toMatch(/item\.spot.*point/);
  });
});
