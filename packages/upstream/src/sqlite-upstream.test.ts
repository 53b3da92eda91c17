import { UpstreamGoneError } from "@weir/protocol";
import { describe, expect, it } from "vitest";
import { schema, tempFile } from "../test/fixtures.js";
import { sqliteUpstream } from "./sqlite-upstream.js";

describe("sqliteUpstream", () => {
  it("captures any SQL on its tables, a transaction as one watermark, in commit order", async () => {
    const upstream = sqliteUpstream({ file: tempFile(), schema });
    const { db } = upstream;
    db.transaction(() => {
      db.prepare("INSERT INTO todo VALUES ('a', 'u', 0, 1.5)").run();
      db.prepare("INSERT INTO todo VALUES ('b', 'u', 1, 0.30000000000000004)").run();
    })();
    db.prepare("UPDATE todo SET id = 'a2', done = 1 WHERE id = 'a'").run();
    db.prepare("DELETE FROM todo WHERE id = 'b'").run();
    const first = await upstream.changes(0n, 100);
    // Nothing was published yet when the first transaction ended: every write since is one watermark.
    expect(first.watermark).toBe(1n);
    expect(first.changes).toEqual([
      {
        watermark: 1n,
        tableName: "todo",
        op: "INSERT",
        rowData: { id: "a", owner: "u", done: false, sort: 1.5 },
        oldData: null,
      },
      {
        watermark: 1n,
        tableName: "todo",
        op: "INSERT",
        rowData: { id: "b", owner: "u", done: true, sort: 0.30000000000000004 },
        oldData: null,
      },
      {
        watermark: 1n,
        tableName: "todo",
        op: "UPDATE",
        rowData: { id: "a2", owner: "u", done: true, sort: 1.5 },
        oldData: { id: "a" },
      },
      { watermark: 1n, tableName: "todo", op: "DELETE", rowData: null, oldData: { id: "b" } },
    ]);
    db.prepare("UPDATE todo SET sort = 2 WHERE id = 'a2'").run();
    const second = await upstream.changes(1n, 100);
    expect(second.watermark).toBe(2n);
    expect(second.changes.map((change) => [change.op, change.oldData])).toEqual([["UPDATE", null]]);
    // Reads are idempotent, and a caught-up read answers its own watermark.
    expect(await upstream.changes(1n, 100)).toEqual(second);
    expect(await upstream.changes(2n, 100)).toEqual({ watermark: 2n, changes: [] });
    upstream.close();
  });

  it("never ends a page inside a watermark", async () => {
    const upstream = sqliteUpstream({ file: tempFile(), schema });
    const insert = upstream.db.prepare("INSERT INTO todo VALUES (?, 'u', 0, 0)");
    upstream.db.transaction(() => {
      for (let i = 0; i < 5; i++) insert.run(`big-${i}`);
    })();
    upstream.publish();
    insert.run("after");
    upstream.publish();
    const page = await upstream.changes(0n, 2);
    expect(page.watermark).toBe(1n);
    expect(page.changes).toHaveLength(5);
    expect((await upstream.changes(page.watermark, 2)).changes.map((c) => c.rowData?.id)).toEqual(["after"]);
    upstream.close();
  });

  it("keeps the newest watermarks and answers an older cursor as gone", async () => {
    const upstream = sqliteUpstream({ file: tempFile(), schema, keepWatermarks: 3 });
    for (let i = 0; i < 6; i++) {
      upstream.db.prepare("INSERT INTO todo VALUES (?, 'u', 0, 0)").run(`t${i}`);
      upstream.publish();
    }
    await expect(upstream.changes(2n, 10)).rejects.toEqual(new UpstreamGoneError(3n));
    expect((await upstream.changes(3n, 10)).changes.map((c) => c.rowData?.id)).toEqual(["t3", "t4", "t5"]);
    // A cursor from the future is no cursor of this source either.
    await expect(upstream.changes(99n, 10)).rejects.toBeInstanceOf(UpstreamGoneError);
    upstream.close();
  });

  it("pages a snapshot in key order, with every type exactly", async () => {
    const upstream = sqliteUpstream({ file: tempFile(), schema });
    const insert = upstream.db.prepare("INSERT INTO blob VALUES (?, ?, ?)");
    insert.run(9007199254740993n, Buffer.from([0xca, 0xfe]), '{"a":[1,"x"]}');
    insert.run(2n, null, null);
    insert.run(-5n, Buffer.alloc(0), '"s"');
    const rows: unknown[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page = await upstream.snapshotPage("blob", cursor, 2);
      expect(page.watermark).toBe(1n);
      rows.push(...page.rows);
      cursor = page.nextCursor;
      pages++;
    } while (cursor !== null);
    expect(pages).toBe(2);
    expect(rows).toEqual([
      { n: -5, data: "", meta: "s" },
      { n: 2, data: null, meta: null },
      { n: "9007199254740993", data: "yv4=", meta: { a: [1, "x"] } },
    ]);
    await expect(upstream.snapshotPage("nope", null, 2)).rejects.toThrow(/no table nope/);
    await expect(upstream.snapshotPage("blob", "not a cursor", 2)).rejects.toThrow(/not a snapshot cursor/);
    upstream.close();
  });

  it("converges: pages read while writes go on, then the changes since the first page's watermark", async () => {
    const upstream = sqliteUpstream({ file: tempFile(), schema });
    const { db } = upstream;
    const insert = db.prepare("INSERT INTO todo VALUES (?, 'u', 0, ?)");
    for (let i = 0; i < 20; i++) insert.run(`r${String(i).padStart(2, "0")}`, i);
    const replica = new Map<string, unknown>();
    let cursor: string | null = null;
    let start: bigint | undefined;
    let step = 0;
    do {
      const page = await upstream.snapshotPage("todo", cursor, 3);
      start ??= page.watermark;
      for (const row of page.rows) replica.set(String(row.id), row);
      cursor = page.nextCursor;
      // Writes between pages: behind the cursor, ahead of it, and deletes.
      db.prepare("UPDATE todo SET sort = sort + 100 WHERE id = ?").run(`r${String(step).padStart(2, "0")}`);
      db.prepare("DELETE FROM todo WHERE id = ?").run(`r${String(19 - step).padStart(2, "0")}`);
      insert.run(`new${step}`, step);
      step++;
    } while (cursor !== null);
    let watermark = start!;
    for (;;) {
      const page = await upstream.changes(watermark, 4);
      for (const change of page.changes) {
        if (change.oldData) replica.delete(String(change.oldData.id));
        if (change.rowData) replica.set(String(change.rowData.id), change.rowData);
      }
      if (page.watermark === watermark) break;
      watermark = page.watermark;
    }
    const truth = db.prepare("SELECT id, owner, done, sort FROM todo ORDER BY id").all() as Record<
      string,
      unknown
    >[];
    const expected = truth.map((row) => ({ ...row, done: row.done === 1n, sort: Number(row.sort) }));
    expect(
      [...replica.values()].sort((a, b) =>
        String((a as { id: string }).id).localeCompare((b as { id: string }).id),
      ),
    ).toEqual(expected);
    upstream.close();
  });
});
