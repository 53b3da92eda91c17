import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { engineWasmUrl, loadEngine } from "@weir/engine-wasm";
import { betterSqliteAdapter } from "@weir/engine-wasm/better-sqlite3";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ITEM_SCHEMA, writeNamespaceDb } from "../../test/namespace-db.js";
import { postJson, startTestServer } from "../../test/test-server.js";
import { jsonOf, runWeir } from "../../test/weir-process.js";

/** A config with the reported named query: four items by id with a tag of a label. */
const TAGGED_CONFIG = `export default {
  schema: { tables: {
    item: { columns: { id: "string" }, primaryKey: ["id"] },
    tag: { columns: { id: "string", itemId: "string", label: "string" }, primaryKey: ["id"] },
  } },
  mutators: { addItem(tx, args) { tx.insert("item", { id: args.id }); } },
  queries: {
    tagged: (args) => ({
      table: "item", orderBy: [["id", "asc"]], limit: 4,
      where: { type: "correlatedSubquery", op: "EXISTS", related: {
        correlation: { parentField: ["id"], childField: ["itemId"] },
        subquery: { table: "tag", where: { type: "simple", op: "=",
          left: { type: "column", name: "label" }, right: { type: "literal", value: args[0] } } },
      } },
    }),
  },
  devAuth: true,
};
`;

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
    expect(human.stdout).toMatch(/^_weir_qx:item\(value-\)\s+item\s+"value" DESC\s+query top$/m);
  });

  it("shows the index a config's named query needs, made when the server installed the namespace", async () => {
    const server = await startTestServer(TAGGED_CONFIG);
    try {
      const push = await postJson(
        `${server.origin}/shop/push`,
        {
          clientGroupID: "g",
          pushVersion: 1,
          mutations: [{ type: "custom", id: 1, clientID: "c", name: "addItem", args: [{ id: "i1" }] }],
        },
        { authorization: "alice" },
      );
      expect(push.status).toBe(200);
      expect(await server.stop()).toBe(0);
      const file = join(server.dir, ".data", "shop.sqlite");
      const run = await runWeir(["inspect", file, "--json"]);
      expect(jsonOf(run)).toMatchObject({
        indexes: [
          {
            name: "_weir_qx:tag(itemId,label)",
            table: "tag",
            columns: '"itemId", "label"',
            derived: true,
            query: "tagged",
          },
        ],
      });
      const human = await runWeir(["inspect", file]);
      expect(human.stdout).toMatch(
        /^_weir_qx:tag\(itemId,label\)\s+tag\s+"itemId", "label"\s+query tagged$/m,
      );
    } finally {
      await server.dispose();
    }
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
