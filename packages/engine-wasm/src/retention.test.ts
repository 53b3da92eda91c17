import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DATABASES, openBetterSqlite, openSqlJs, testEngine } from "../test/databases.js";
import { Namespace, todoSchema } from "../test/fixtures.js";

const insert = "INSERT INTO todo (id, owner, text, done, sort) VALUES (?, 'u', 'x', 0, 0)";

describe.each(DATABASES)("retention on $kind", ({ open }) => {
  async function namespace() {
    return new Namespace(await testEngine(), open(), todoSchema);
  }

  it("keeps the newest versions, raises the floor, and resets older cookies", async () => {
    const ns = await namespace();
    for (let i = 0; i < 10; i++) ns.sql(insert, [`r${i}`]);
    const result = ns.db.transaction(() => ns.engine.prune(ns.db.adapter, 3));
    expect(result).toEqual({ deleted: 7, floor: 7, more: false });
    expect(ns.pull({ cookie: 6 }).reset).toBe(true);
    const recent = ns.pull({ cookie: 7 });
    expect(recent.reset).toBe(false);
    expect(recent.json.rowsPatch?.map((op) => op.value?.id)).toEqual(["r7", "r8", "r9"]);
  });

  it("prunes in bounded batches and says when more is due", async () => {
    const ns = await namespace();
    for (let i = 0; i < 5; i++) ns.sql(insert, [`r${i}`]);
    const prune = () => ns.db.transaction(() => ns.engine.prune(ns.db.adapter, 0, 2));
    expect(prune()).toEqual({ deleted: 2, floor: 5, more: true });
    expect(prune()).toEqual({ deleted: 2, floor: 5, more: true });
    expect(prune()).toEqual({ deleted: 1, floor: 5, more: false });
    expect(ns.engine.state(ns.db.adapter)).toMatchObject({ watermark: 5, floor: 5, changes: 0 });
    expect(prune()).toEqual({ deleted: 0, floor: 5, more: false });
    expect(ns.pull({ cookie: 5 }).unchanged).toBe(true);
  });

  it("deletes the prior values of the changes it prunes, and only those", async () => {
    const ns = await namespace();
    for (let i = 0; i < 4; i++) ns.sql(insert, [`r${i}`]);
    for (let i = 0; i < 4; i++) ns.sql("UPDATE todo SET text = 'y' WHERE id = ?", [`r${i}`]);
    const priors = () =>
      ns.db.adapter
        .query('SELECT _weir_seq >> 24 FROM "_weir_prior_todo" ORDER BY _weir_seq', [])
        .map((row) => Number(row[0]));
    expect(priors()).toEqual([5, 6, 7, 8]);
    expect(ns.db.transaction(() => ns.engine.prune(ns.db.adapter, 2))).toMatchObject({ floor: 6 });
    expect(priors()).toEqual([7, 8]);
    ns.db.transaction(() => ns.engine.prune(ns.db.adapter, 0, 1));
    expect(priors()).toEqual([8]);
  });

  it("resets every client once after invalidate", async () => {
    const ns = await namespace();
    ns.sql(insert, ["a"]);
    const { cookie } = ns.pull({ cookie: null });
    ns.db.transaction(() => ns.engine.invalidate(ns.db.adapter));
    const reset = ns.pull({ cookie });
    expect(reset.reset).toBe(true);
    expect(reset.json.rowsPatch?.map((op) => op.op)).toEqual(["clear", "put"]);
    expect(ns.pull({ cookie: reset.cookie }).unchanged).toBe(true);
  });
});

describe("the watermark survives a full prune and a reopen", () => {
  const dir = mkdtempSync(join(tmpdir(), "weir-retention-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("on a better-sqlite3 file", async () => {
    const file = join(dir, "ns.db");
    const engine = await testEngine();
    const first = new Namespace(engine, openBetterSqlite(file), todoSchema);
    for (let i = 0; i < 4; i++) first.sql(insert, [`r${i}`]);
    first.db.transaction(() => engine.prune(first.db.adapter, 0));
    first.db.close();
    const reopened = new Namespace(engine, openBetterSqlite(file), todoSchema);
    expect(engine.state(reopened.db.adapter)).toMatchObject({ watermark: 4, floor: 4, changes: 0 });
    expect(reopened.pull({ cookie: 4 }).unchanged).toBe(true);
    reopened.sql(insert, ["r4"], "other");
    expect(reopened.pull({ cookie: 4 }).json.rowsPatch?.map((op) => op.value?.id)).toEqual(["r4"]);
    reopened.db.close();
  });

  it("on a sql.js image", async () => {
    const engine = await testEngine();
    const db = openSqlJs();
    const first = new Namespace(engine, db, todoSchema);
    for (let i = 0; i < 4; i++) first.sql(insert, [`r${i}`]);
    db.transaction(() => engine.prune(db.adapter, 0));
    const reopened = new Namespace(engine, openSqlJs(db.export()), todoSchema);
    expect(engine.state(reopened.db.adapter)).toMatchObject({ watermark: 4, floor: 4 });
  });
});
