import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { engineWasmUrl, loadEngine } from "@weir/engine-wasm";
import { betterSqliteAdapter } from "@weir/engine-wasm/better-sqlite3";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ITEM_SCHEMA, writeNamespaceDb } from "../../test/namespace-db.js";
import { jsonOf, runWeir } from "../../test/weir-process.js";

let dir: string;
let db: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "weir-inspect-"));
  db = join(dir, "app.sqlite");
  await writeNamespaceDb(db, 30, 10);
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("weir inspect", () => {
  it("reports watermark, floor, change log, clients and row counts as JSON", async () => {
    const run = await runWeir(["inspect", db, "--json"]);
    expect(run.code).toBe(0);
    const report = jsonOf(run);
    expect(report).toMatchObject({
      watermark: 30,
      floor: 0,
      changes: 30,
      clients: 1,
      clientGroups: 1,
      retainChanges: null,
      tables: { item: 10, note: 0 },
      clientList: [{ clientID: "client-1", clientGroupID: "group-1", userID: "user-1", lastMutationID: 30 }],
    });
  });

  it("reports the same in human form", async () => {
    const run = await runWeir(["inspect", db]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^watermark:\s+30$/m);
    expect(run.stdout).toMatch(/^item\s+10$/m);
    expect(run.stdout).toMatch(/^client-1\s+group-1\s+user-1\s+30$/m);
  });

  it("lists the indexes on the app's tables, the ones derived from queries told apart", async () => {
    const file = join(dir, "indexed.sqlite");
    await writeNamespaceDb(file, 3);
    const sqlite = new Database(file);
    sqlite.exec("CREATE INDEX note_text ON note (text)");
    const engine = await loadEngine(readFileSync(engineWasmUrl));
    const adapter = betterSqliteAdapter(sqlite);
    engine.install(adapter, ITEM_SCHEMA);
    const ast = { table: "item", orderBy: [["value", "desc"]], limit: 3 };
    sqlite.transaction(() =>
      engine.pull(adapter, {
        clientGroupID: "group-2",
        userID: "user-1",
        cookie: null,
        queries: { patch: [{ op: "put", hash: "top", name: "top", args: [], ast }] },
      }),
    )();
    sqlite.close();
    const run = await runWeir(["inspect", file, "--json"]);
    expect(jsonOf(run)).toMatchObject({
      indexes: [
        { name: "_weir_qx:item(value-)", table: "item", columns: '"value" DESC', derived: true },
        { name: "note_text", table: "note", columns: "text", derived: false },
      ],
    });
    const human = await runWeir(["inspect", file]);
    expect(human.stdout).toMatch(/^_weir_qx:item\(value-\)\s+item\s+"value" DESC\s+derived from queries$/m);
  });

  it("lists changes after a version, bounded by --limit", async () => {
    const run = await runWeir(["inspect", db, "changes", "--since", "25", "--limit", "3", "--json"]);
    expect(run.code).toBe(0);
    const { changes } = jsonOf<{ changes: { version: number; table: string; key: unknown[] }[] }>(run);
    expect(changes).toEqual([
      { version: 26, table: "item", key: ["row-6"] },
      { version: 27, table: "item", key: ["row-7"] },
      { version: 28, table: "item", key: ["row-8"] },
    ]);
    const human = await runWeir(["inspect", db, "changes", "--since", "29"]);
    expect(human.stdout).toMatch(/^30\s+item\s+\["row-0"\]$/m);
    const none = await runWeir(["inspect", db, "changes", "--since", "30"]);
    expect(none.stdout).toContain("no changes after version 30");
  });

  it("fails with exit 1 on a missing file or a file that is not a weir database", async () => {
    const missing = await runWeir(["inspect", join(dir, "missing.sqlite"), "--json"]);
    expect(missing.code).toBe(1);
    expect(jsonOf(missing)).toMatchObject({ error: "not_found" });
    const other = join(dir, "other.txt");
    writeFileSync(other, "hello");
    const notDb = await runWeir(["inspect", other]);
    expect(notDb.code).toBe(1);
    expect(notDb.stderr).toContain("cannot open");
  });

  it("an unknown view is a usage error", async () => {
    const run = await runWeir(["inspect", db, "rows"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('unknown view "rows"');
  });
});
