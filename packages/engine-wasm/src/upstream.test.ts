import { describe, expect, it } from "vitest";
import { DATABASES, openSqlJs, testEngine } from "../test/databases.js";
import { Namespace } from "../test/fixtures.js";
import type { Schema } from "./types.js";
import {
  reduceUpstreamBatch,
  snapshotRows,
  type UpstreamRowChange as UpstreamChange,
} from "./upstream-batch.js";

const schema = {
  tables: {
    todo: { columns: { id: "string", owner: "string", done: "boolean" }, primaryKey: ["id"] },
    blob: {
      columns: {
        n: "integer",
        data: { type: "bytes", nullable: true },
        meta: { type: "json", nullable: true },
      },
      primaryKey: ["n"],
    },
  },
} satisfies Schema;

const insert = (id: string, owner = "u", done = false): UpstreamChange => ({
  tableName: "todo",
  op: "INSERT",
  rowData: { id, owner, done },
  oldData: null,
});

describe.each(DATABASES)("upstream ingest on $kind", ({ open }) => {
  async function setup() {
    const ns = new Namespace(await testEngine(), open(), schema);
    const apply = (watermark: string, changes: UpstreamChange[], fence = 0) =>
      ns.db.transaction(() =>
        ns.engine.applyUpstream(
          ns.db.adapter,
          { watermark, tables: reduceUpstreamBatch(schema, changes).tables },
          { fence },
        ),
      );
    const rows = () => ns.db.adapter.query("SELECT id, owner, done FROM todo ORDER BY id", []);
    return { ns, apply, rows };
  }

  it("applies a batch as one version with its cursor, and a replay changes nothing", async () => {
    const { ns, apply, rows } = await setup();
    const { cookie } = ns.pull({ cookie: null });
    const result = apply("10", [insert("a"), insert("b"), { ...insert("a", "v"), op: "UPDATE" }]);
    // Three changes, two rows: a batch is reduced to a final write per row.
    expect(result).toEqual({ alreadyApplied: false, rows: 2, cursor: "10", committed: true });
    expect(rows()).toEqual([
      ["a", "v", 0],
      ["b", "u", 0],
    ]);
    const pulled = ns.pull({ cookie });
    expect(pulled.cookie).toBe(cookie + 1);
    expect(pulled.json.rowsPatch?.map((op) => op.value?.id)).toEqual(["a", "b"]);
    expect(apply("10", [insert("c")])).toMatchObject({ alreadyApplied: true, rows: 0 });
    expect(apply("9", [insert("c")])).toMatchObject({ alreadyApplied: true });
    expect(rows()).toHaveLength(2);
    expect(ns.engine.upstreamState(ns.db.adapter)).toMatchObject({ cursor: "10", snapshot: null });
  });

  it("moves only the cursor for tables the schema does not model", async () => {
    const { ns, apply } = await setup();
    const before = ns.engine.state(ns.db.adapter).watermark;
    const result = apply("5", [{ tableName: "other", op: "INSERT", rowData: { x: 1 }, oldData: null }]);
    expect(result).toEqual({ alreadyApplied: false, rows: 0, cursor: "5", committed: false });
    expect(ns.engine.state(ns.db.adapter).watermark).toBe(before);
  });

  it("reduces a batch in order: key moves, deletes, truncates, the last change of a row wins", async () => {
    const { ns, apply, rows } = await setup();
    apply("1", [insert("a"), insert("b"), insert("c")]);
    apply("2", [
      {
        tableName: "todo",
        op: "UPDATE",
        rowData: { id: "a2", owner: "u", done: true },
        oldData: { id: "a" },
      },
      { tableName: "todo", op: "DELETE", rowData: null, oldData: { id: "b" } },
      insert("b", "again"),
      { tableName: "todo", op: "DELETE", rowData: null, oldData: { id: "c", owner: "u", done: false } },
    ]);
    expect(rows()).toEqual([
      ["a2", "u", 1],
      ["b", "again", 0],
    ]);
    apply("3", [
      insert("x"),
      { tableName: "todo", op: "TRUNCATE", rowData: null, oldData: null },
      insert("y"),
    ]);
    expect(rows()).toEqual([["y", "u", 0]]);
    expect(ns.pull({ cookie: 2 }).json.rowsPatch?.map((op) => [op.op, op.value?.id ?? op.id?.id])).toEqual([
      ["del", "a2"],
      ["del", "b"],
      ["put", "y"],
    ]);
  });

  it("keeps integers beyond 2^53, bytes and JSON exactly", async () => {
    const { ns, apply } = await setup();
    apply("1", [
      {
        tableName: "blob",
        op: "INSERT",
        rowData: { n: "9007199254740993", data: "yv4=", meta: { a: [1, "x"] } },
        oldData: null,
      },
      { tableName: "blob", op: "INSERT", rowData: { n: 2, data: null, meta: "text" }, oldData: null },
    ]);
    expect(ns.db.adapter.query("SELECT CAST(n AS TEXT), hex(data), meta FROM blob ORDER BY n", [])).toEqual([
      ["2", "", '"text"'],
      ["9007199254740993", "CAFE", '{"a":[1,"x"]}'],
    ]);
    apply("2", [{ tableName: "blob", op: "DELETE", rowData: null, oldData: { n: "9007199254740993" } }]);
    expect(ns.db.adapter.query("SELECT count(*) FROM blob", [])).toEqual([[1]]);
  });

  it.each([
    ["an unknown column", { id: "a", owner: "u", done: false, extra: 1 }, /todo has no column extra/],
    ["a missing value", { id: "a", done: false }, /todo.owner is not nullable/],
    ["a row without its key", { owner: "u", done: false }, /lacks key column id|todo.id is not nullable/],
  ])("refuses %s as schema drift", (_, rowData, message) => {
    expect(() =>
      reduceUpstreamBatch(schema, [
        insert("ok"),
        { tableName: "todo", op: "INSERT", rowData, oldData: null },
      ]),
    ).toThrow(expect.objectContaining({ code: "schema_drift", message: expect.stringMatching(message) }));
  });

  it("quarantines a row with a value its column cannot hold, and applies the rest", async () => {
    const { ns, apply, rows } = await setup();
    apply("1", [insert("a"), insert("b"), insert("c")]);
    const { cookie } = ns.pull({ cookie: null });
    const batch: UpstreamChange[] = [
      // An update to a value the column cannot hold drops the row; so does a null where the
      // column is not nullable, and an insert of such a row adds nothing.
      { tableName: "todo", op: "UPDATE", rowData: { id: "a", owner: 7, done: false }, oldData: { id: "a" } },
      {
        tableName: "todo",
        op: "UPDATE",
        rowData: { id: "b", owner: null, done: true },
        oldData: { id: "b" },
      },
      { tableName: "todo", op: "INSERT", rowData: { id: "x", owner: "u", done: "NaN" }, oldData: null },
      insert("d"),
      { tableName: "blob", op: "INSERT", rowData: { n: "12.5", data: null, meta: null }, oldData: null },
    ];
    const reduced = reduceUpstreamBatch(schema, batch);
    expect(reduced.quarantined).toEqual([
      { table: "todo", reason: "todo.owner is string, and the upstream sent the number 7" },
      { table: "todo", reason: "todo.owner is not nullable, and the upstream sent null" },
      { table: "todo", reason: 'todo.done is boolean, and the upstream sent the string "NaN"' },
      { table: "blob", reason: 'blob.n is integer, and the upstream sent the string "12.5"' },
    ]);
    apply("2", batch);
    expect(rows()).toEqual([
      ["c", "u", 0],
      ["d", "u", 0],
    ]);
    expect(ns.pull({ cookie }).json.rowsPatch).toEqual([
      { op: "del", tableName: "todo", id: { id: "a" } },
      { op: "del", tableName: "todo", id: { id: "b" } },
      { op: "put", tableName: "todo", value: { id: "d", owner: "u", done: false } },
    ]);
    // A later change that fits brings the row back.
    apply("3", [{ ...insert("a", "w"), op: "UPDATE", oldData: { id: "a" } }]);
    expect(rows()[0]).toEqual(["a", "w", 0]);
    const quarantined: { table: string; reason: string }[] = [];
    expect(
      snapshotRows(
        schema,
        "todo",
        [
          { id: "p", owner: 1, done: true },
          { id: "q", owner: "u", done: true },
        ],
        quarantined,
      ),
    ).toEqual([["q", "u", 1]]);
    expect(quarantined).toHaveLength(1);
  });

  it("holds a JSON null in a json column that is not nullable", () => {
    const strict = {
      tables: { doc: { columns: { id: "string", body: "json" }, primaryKey: ["id"] } },
    } satisfies Schema;
    const reduced = reduceUpstreamBatch(strict, [
      { tableName: "doc", op: "INSERT", rowData: { id: "n", body: null }, oldData: null },
    ]);
    expect(reduced.quarantined).toEqual([]);
    expect(reduced.tables[0]!.upserts).toEqual([["n", "null"]]);
  });

  it("refuses a batch from an ingester whose fencing token is older than the newest", async () => {
    const { ns, apply, rows } = await setup();
    const first = ns.db.transaction(() => ns.engine.claimFence(ns.db.adapter));
    const second = ns.db.transaction(() => ns.engine.claimFence(ns.db.adapter));
    expect(second).toBe(first + 1);
    expect(() => apply("1", [insert("late")], first)).toThrow(expect.objectContaining({ code: "conflict" }));
    expect(rows()).toEqual([]);
    expect(apply("1", [insert("now")], second)).toMatchObject({ rows: 1 });
  });

  it("builds a snapshot generation aside, catches it up, and swaps it in as one reset", async () => {
    const { ns, apply, rows } = await setup();
    apply("1", [insert("old")]);
    const client = ns.pull({ cookie: null });
    const tx = <T>(fn: () => T) => ns.db.transaction(fn);
    const { engine, db } = ns;
    const begun = tx(() => engine.beginSnapshot(db.adapter, "20", 0));
    expect(begun.snapshot).toMatchObject({
      state: "paging",
      table: "todo",
      cursor: null,
      startWatermark: "20",
    });
    const page = (table: string, data: unknown[], nextCursor: string | null) =>
      tx(() =>
        engine.applySnapshotPage(
          db.adapter,
          { table, rows: snapshotRows(schema, table, data), nextCursor },
          0,
        ),
      );
    expect(page("todo", [{ id: "s1", owner: "u", done: false }], "c1")).toBe(1);
    expect(engine.upstreamState(db.adapter).snapshot).toMatchObject({ table: "todo", cursor: "c1" });
    page("todo", [{ id: "s2", owner: "u", done: false }], null);
    expect(engine.upstreamState(db.adapter).snapshot).toMatchObject({ table: "blob", cursor: null });
    page("blob", [], null);
    expect(engine.upstreamState(db.adapter).snapshot).toMatchObject({
      state: "catching_up",
      catchupWatermark: "20",
    });
    // Clients still see the tables as they were.
    expect(rows()).toEqual([["old", "u", 0]]);
    expect(ns.pull({ cookie: client.cookie }).unchanged).toBe(true);
    // The catch-up repairs a row that changed while the pages were read.
    const caught = tx(() =>
      engine.applyUpstream(
        db.adapter,
        {
          watermark: "25",
          tables: reduceUpstreamBatch(schema, [{ ...insert("s1", "moved"), op: "UPDATE" }]).tables,
        },
        { fence: 0, into: "snapshot" },
      ),
    );
    expect(caught).toMatchObject({ rows: 1, cursor: "25", committed: false });
    expect(tx(() => engine.finalizeSnapshot(db.adapter, 0))).toBe("25");
    expect(rows()).toEqual([
      ["s1", "moved", 0],
      ["s2", "u", 0],
    ]);
    expect(engine.upstreamState(db.adapter)).toMatchObject({ cursor: "25", generation: 1, snapshot: null });
    const reset = ns.pull({ cookie: client.cookie });
    expect(reset.reset).toBe(true);
    expect(reset.json.rowsPatch?.slice(1).map((op) => op.value?.id)).toEqual(["s1", "s2"]);
    // The swapped-in table is captured like before.
    apply("26", [{ tableName: "todo", op: "DELETE", rowData: null, oldData: { id: "s2" } }]);
    expect(ns.pull({ cookie: reset.cookie }).json.rowsPatch).toEqual([
      { op: "del", tableName: "todo", id: { id: "s2" } },
    ]);
  });
});

describe("a snapshot generation across a restart", () => {
  it("resumes from its stored progress", async () => {
    const engine = await testEngine();
    let db = openSqlJs();
    let ns = new Namespace(engine, db, schema);
    db.transaction(() => engine.beginSnapshot(db.adapter, "7", 0));
    db.transaction(() =>
      engine.applySnapshotPage(
        db.adapter,
        {
          table: "todo",
          rows: snapshotRows(schema, "todo", [{ id: "p1", owner: "u", done: true }]),
          nextCursor: "k",
        },
        0,
      ),
    );
    const image = db.export();
    db.close();
    db = openSqlJs(image);
    ns = new Namespace(engine, db, schema);
    expect(ns.engine.upstreamState(db.adapter).snapshot).toMatchObject({
      state: "paging",
      table: "todo",
      cursor: "k",
    });
    db.transaction(() =>
      engine.applySnapshotPage(db.adapter, { table: "todo", rows: [], nextCursor: null }, 0),
    );
    db.transaction(() =>
      engine.applySnapshotPage(db.adapter, { table: "blob", rows: [], nextCursor: null }, 0),
    );
    db.transaction(() => engine.finalizeSnapshot(db.adapter, 0));
    expect(db.adapter.query("SELECT id FROM todo", [])).toEqual([["p1"]]);
  });
});
