import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeNamespaceDb } from "../../test/namespace-db.js";
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
