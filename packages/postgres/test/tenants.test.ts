import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startPostgres, type TestPostgres } from "@weir/postgres-testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type PostgresUpstream, postgresUpstream } from "../src/index.js";
import { NamespaceModel, sortByKey, waitFor } from "./namespace-model.js";

let db: TestPostgres;
let dir: string;
let upstream: PostgresUpstream;
const woken: { namespaces: string[]; watermark: bigint }[] = [];

beforeAll(async () => {
  db = await startPostgres();
  dir = mkdtempSync(join(tmpdir(), "weir-tenants-"));
  await db.sql(`CREATE TABLE todo (id text PRIMARY KEY, org_id int NOT NULL, title text NOT NULL, secret text);
    CREATE TABLE plan (id int PRIMARY KEY, name text NOT NULL);
    INSERT INTO todo VALUES ('a1', 1, 'first of org 1', 'x'), ('a2', 1, 'second of org 1', 'x'),
      ('b1', 2, 'first of org 2', 'y');
    INSERT INTO plan VALUES (1, 'free'), (2, 'pro');`);
  upstream = await postgresUpstream({
    databaseUrl: db.url,
    tables: { todo: { columns: ["id", "org_id", "title"] }, plan: { tenantColumn: null } },
    tenant: { column: "org_id" },
    bufferFile: join(dir, "buffer.sqlite"),
    setReplicaIdentity: true,
    namespaces: ["1", "2", "3"],
    onCommit: (namespaces, watermark) => woken.push({ namespaces: [...namespaces].sort(), watermark }),
  });
});

afterAll(async () => {
  await upstream?.close();
  await db?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function orgRows(org: number): Promise<Record<string, unknown>[]> {
  const { rows } = await db.sql("SELECT id, org_id, title FROM todo WHERE org_id = $1", [org]);
  return sortByKey(rows, ["id"]);
}

describe("namespaces as tenants", () => {
  it("sends each namespace only its own rows and only the configured columns, shared tables whole", async () => {
    const org1 = new NamespaceModel({ todo: ["id"], plan: ["id"] });
    const org2 = new NamespaceModel({ todo: ["id"], plan: ["id"] });
    await org1.snapshot(upstream.source("1"), ["todo", "plan"]);
    await org2.snapshot(upstream.source("2"), ["todo", "plan"]);
    expect(org1.rows("todo")).toEqual(await orgRows(1));
    expect(org2.rows("todo")).toEqual([{ id: "b1", org_id: 2, title: "first of org 2" }]);
    expect(org1.rows("plan")).toHaveLength(2);
    expect(org2.rows("plan")).toHaveLength(2);
    // A namespace that is no tenant value of an integer column matches nothing.
    const stranger = await upstream.source("not-a-number").snapshotPage("todo", null, 10);
    expect(stranger.rows).toEqual([]);

    const watermark = BigInt((await upstream.status()).buffer.newestWatermark);
    await db.sql(
      "INSERT INTO todo VALUES ('a3', 1, 'third of org 1', 'x'), ('b2', 2, 'second of org 2', 'y')",
    );
    await db.sql("UPDATE todo SET title = 'renamed', secret = 'z' WHERE id = 'b1'");
    // a2 moves from org 1 to org 2, and its key changes in the same update.
    await db.sql("UPDATE todo SET org_id = 2, id = 'b3' WHERE id = 'a2'");
    // b2 moves from org 2 to org 3.
    await db.sql("UPDATE todo SET org_id = 3 WHERE id = 'b2'");
    await db.sql("DELETE FROM todo WHERE id = 'a1'");
    await db.sql("UPDATE plan SET name = 'team' WHERE id = 2");
    await waitFor(
      async () => BigInt((await upstream.status()).buffer.newestWatermark) > watermark + 0n,
      20_000,
    );
    await waitFor(async () => (await upstream.status()).committed.transactions >= 6, 20_000, "six commits");

    const changes1 = (await upstream.source("1").changes(org1.watermark, 100)).changes;
    expect(changes1.map(({ watermark: _, ...c }) => c)).toEqual([
      {
        tableName: "todo",
        op: "INSERT",
        rowData: { id: "a3", org_id: 1, title: "third of org 1" },
        oldData: null,
      },
      // Moved away: a DELETE of the old key.
      { tableName: "todo", op: "DELETE", rowData: null, oldData: { id: "a2" } },
      { tableName: "todo", op: "DELETE", rowData: null, oldData: { id: "a1" } },
      { tableName: "plan", op: "UPDATE", rowData: { id: 2, name: "team" }, oldData: null },
    ]);
    const changes2 = (await upstream.source("2").changes(org2.watermark, 100)).changes;
    expect(changes2.map(({ watermark: _, ...c }) => c)).toEqual([
      {
        tableName: "todo",
        op: "INSERT",
        rowData: { id: "b2", org_id: 2, title: "second of org 2" },
        oldData: null,
      },
      { tableName: "todo", op: "UPDATE", rowData: { id: "b1", org_id: 2, title: "renamed" }, oldData: null },
      // Moved in: an INSERT of the new row.
      {
        tableName: "todo",
        op: "INSERT",
        rowData: { id: "b3", org_id: 2, title: "second of org 1" },
        oldData: null,
      },
      { tableName: "todo", op: "DELETE", rowData: null, oldData: { id: "b2" } },
      { tableName: "plan", op: "UPDATE", rowData: { id: 2, name: "team" }, oldData: null },
    ]);
    const changes3 = (await upstream.source("3").changes(org2.watermark, 100)).changes;
    expect(changes3.map((c) => [c.tableName, c.op, c.rowData?.id])).toEqual([
      ["todo", "INSERT", "b2"],
      ["plan", "UPDATE", 2],
    ]);
    // No change of another tenant's row ever reaches a namespace.
    for (const [org, changes] of [
      [1, changes1],
      [2, changes2],
      [3, changes3],
    ] as const) {
      for (const change of changes) {
        if (change.tableName === "todo" && change.rowData) expect(change.rowData.org_id).toBe(org);
      }
    }

    await org1.catchUp(upstream.source("1"));
    await org2.catchUp(upstream.source("2"));
    expect(org1.rows("todo")).toEqual(await orgRows(1));
    expect(org2.rows("todo")).toEqual(await orgRows(2));

    // The wake names the tenants a commit touched; a shared table's change wakes every known
    // namespace. (Commits flushed together wake once, with the last watermark.)
    const wakeOf = (watermark: bigint) => woken.find((wake) => wake.watermark >= watermark)!.namespaces;
    expect(wakeOf(changes1[1]!.watermark)).toEqual(expect.arrayContaining(["1", "2"]));
    expect(wakeOf(changes1[3]!.watermark)).toEqual(["1", "2", "3"]);
    expect(woken.flatMap((wake) => wake.namespaces)).not.toContain("not-a-number");
  });
});
