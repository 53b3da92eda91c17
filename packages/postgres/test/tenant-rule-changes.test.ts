import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createServer, type WeirServer } from "@weir/node-host";
import { startPostgres, type TestPostgres } from "@weir/postgres-testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type PostgresUpstream, postgresUpstream } from "../src/index.js";
import type { TableOptions } from "../src/upstream-options.js";
import { expectConverged, tenantRows } from "./converged.js";
import { SyncedClient } from "./synced-client.js";

// The tenant rules change (another tenant column, a table shared by every namespace, a tenant
// column again): after the restart the docs describe, every namespace holds exactly the rows
// PostgreSQL gives it under the new rule, in clients synced under the old one too.

const ADMIN_KEY = "admin-key-tenant-rules";
const NAMESPACES = ["a", "b", "c"];

let db: TestPostgres;
let dir: string;
let upstream: PostgresUpstream | null = null;
let weir: WeirServer | null = null;
let url = "";
const logged: Record<string, unknown>[] = [];

async function start(item: TableOptions): Promise<void> {
  const current = await postgresUpstream({
    databaseUrl: db.url,
    tables: { item },
    bufferFile: join(dir, "buffer.sqlite"),
    namespaces: NAMESPACES,
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
  dir = mkdtempSync(join(tmpdir(), "weir-tenant-rules-"));
  mkdirSync(join(dir, "data"));
  // Two columns that name namespaces, spread differently over the rows.
  await db.sql(`CREATE TABLE item (id int PRIMARY KEY, org text NOT NULL, team text NOT NULL, title text);
    ALTER TABLE item REPLICA IDENTITY FULL;
    INSERT INTO item SELECT i, (ARRAY['a','b','c'])[1 + i % 3], (ARRAY['a','b','c'])[1 + (i / 3) % 3], 'title ' || i
      FROM generate_series(1, 90) i;`);
});

afterAll(async () => {
  await stop();
  await db?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe("tenant rule changes", () => {
  it("another tenant column, then none (a shared table), then one again: every namespace equals a fresh SELECT under the new rule", async () => {
    const clients = NAMESPACES.map((ns) => new SyncedClient(ns, ADMIN_KEY));
    await start({ tenantColumn: "org" });
    await expectConverged(url, clients, ["item"], (table, ns) => tenantRows(db, table, "org", ns));

    const rules: (string | null)[] = ["team", null, "org"];
    let id = 1000;
    for (const rule of rules) {
      // Written while the old rule is followed, and while nothing runs.
      await db.sql("INSERT INTO item VALUES ($1, 'a', 'b', 'new'), ($2, 'c', 'a', 'new')", [id++, id++]);
      await db.sql("UPDATE item SET title = title || '.' WHERE id % 7 = 0");
      await stop();
      await db.sql("UPDATE item SET team = 'c' WHERE id % 11 = 0");
      await start({ tenantColumn: rule });
      await db.sql("DELETE FROM item WHERE id % 13 = 0 AND id < 1000");
      await expectConverged(url, clients, ["item"], (table, ns) => tenantRows(db, table, rule, ns));
      await db.sql("DELETE FROM item WHERE id % 17 = 0 AND id < 1000");
      await expectConverged(url, clients, ["item"], (table, ns) => tenantRows(db, table, rule, ns));
    }
    const resets = logged.filter((line) => line.msg === "buffer reset");
    expect(resets).toHaveLength(rules.length);
    expect(resets[0]).toMatchObject({ level: "warn", reason: expect.stringContaining("tenant rules") });
  });
});
