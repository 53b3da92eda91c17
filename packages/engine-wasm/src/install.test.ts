import { describe, expect, it } from "vitest";
import { DATABASES, testEngine } from "../test/databases.js";
import { todoSchema } from "../test/fixtures.js";
import type { Schema } from "./types.js";
import { reduceUpstreamBatch } from "./upstream-batch.js";

describe.each(DATABASES)("install on $kind", ({ open }) => {
  it("creates once, then is a no-op", async () => {
    const engine = await testEngine();
    const db = open();
    expect(db.transaction(() => engine.install(db.adapter, todoSchema))).toEqual({ outcome: "created" });
    const before = db.totalChanges();
    expect(db.transaction(() => engine.install(db.adapter, todoSchema))).toEqual({ outcome: "unchanged" });
    expect(engine.state(db.adapter)).toMatchObject({ watermark: 0, floor: 0, changes: 0 });
    // The only write of a repeated install is the engine version in the state row.
    expect(db.totalChanges() - before).toBeLessThanOrEqual(1);
  });

  it("reads the catalog once on a new database: the probes for an earlier engine's layout run only where weir was", async () => {
    const engine = await testEngine();
    const db = open();
    const reads: string[] = [];
    const counting = {
      ...db.adapter,
      query: (sql: string, params: Parameters<typeof db.adapter.query>[1]) => {
        reads.push(sql);
        return db.adapter.query(sql, params);
      },
    };
    const probes = () => reads.filter((sql) => /sqlite_master|pragma_table_info|_weir_state/.test(sql));
    expect(db.transaction(() => engine.install(counting, todoSchema))).toEqual({ outcome: "created" });
    expect(probes()).toHaveLength(1);
    reads.length = 0;
    expect(db.transaction(() => engine.install(counting, todoSchema))).toEqual({ outcome: "unchanged" });
    expect(probes().length).toBeGreaterThan(1);
  });

  it("rewrites change capture that an earlier engine wrote otherwise, and keeps capturing", async () => {
    const engine = await testEngine();
    const db = open();
    db.transaction(() => engine.install(db.adapter, todoSchema));
    const triggers = () =>
      db.adapter.query("SELECT name, sql FROM sqlite_master WHERE type = 'trigger' ORDER BY name", []);
    const current = triggers();
    // An earlier engine's insert capture: the same log row, written through INSERT ... SELECT.
    db.adapter.exec('DROP TRIGGER "_weir_capture_todo_insert"', []);
    db.adapter.exec(
      `CREATE TRIGGER "_weir_capture_todo_insert" AFTER INSERT ON "todo" BEGIN INSERT INTO _weir_changes (seq, version, tbl, pk, existed) SELECT max(seq + 1, (version + (tbl = '')) * 16777216), version + (tbl = ''), 'todo', json_array(NEW."id"), NULL FROM (SELECT seq, version, tbl FROM _weir_changes ORDER BY seq DESC LIMIT 1); END`,
      [],
    );
    expect(triggers()).not.toEqual(current);
    expect(db.transaction(() => engine.install(db.adapter, todoSchema))).toEqual({ outcome: "unchanged" });
    expect(triggers()).toEqual(current);
    db.adapter.exec("INSERT INTO todo (id, owner, text, done, sort) VALUES ('t', 'u', '', 0, 0)", []);
    expect(engine.listChanges(db.adapter, 0, 10)).toEqual([{ version: 1, table: "todo", key: ["t"] }]);
  });

  it("upgrades a log that kept prior values as JSON: every client resets once", async () => {
    const engine = await testEngine();
    const db = open();
    db.transaction(() => engine.install(db.adapter, todoSchema));
    db.adapter.exec("INSERT INTO todo (id, owner, text, done, sort) VALUES ('t', 'u', '', 0, 0)", []);
    db.transaction(() => engine.commit(db.adapter));
    // The log as engines before 0.2 wrote it, with a JSON pre-image in `old`.
    db.adapter.exec("DROP TABLE _weir_changes", []);
    db.adapter.exec(
      "CREATE TABLE _weir_changes (seq INTEGER PRIMARY KEY, version INTEGER NOT NULL, tbl TEXT NOT NULL, pk TEXT NOT NULL, old TEXT, CHECK (seq >= version * 16777216 AND seq < (version + 1) * 16777216))",
      [],
    );
    db.adapter.exec("INSERT INTO _weir_changes VALUES (0, 0, '', '[]', NULL)", []);
    db.adapter.exec(`INSERT INTO _weir_changes VALUES (16777216, 1, 'todo', '["t"]', '{"id":"t"}')`, []);
    db.adapter.exec("INSERT INTO _weir_changes VALUES (16777217, 1, '', '[]', NULL)", []);
    expect(db.transaction(() => engine.install(db.adapter, todoSchema))).toEqual({ outcome: "unchanged" });
    const state = engine.state(db.adapter);
    expect(state).toMatchObject({ watermark: 2, floor: 2 });
    const pulled = JSON.parse(
      db.transaction(() => engine.pull(db.adapter, { clientGroupID: "g", userID: "u", cookie: 1 })).body,
    );
    expect(pulled.rowsPatch[0]).toEqual({ op: "clear" });
    db.adapter.exec("DELETE FROM todo", []);
    expect(db.transaction(() => engine.commit(db.adapter))).toEqual({ watermark: 3, committed: true });
    const after = JSON.parse(
      db.transaction(() => engine.pull(db.adapter, { clientGroupID: "g", userID: "u", cookie: 2 })).body,
    );
    expect(after.rowsPatch).toEqual([{ op: "del", tableName: "todo", id: { id: "t" } }]);
  });

  it("installs a table with a column named seq, and sends its del once the row leaves a user's view", async () => {
    const engine = await testEngine();
    const db = open();
    const schema = {
      tables: { entry: { columns: { id: "string", owner: "string", seq: "integer" }, primaryKey: ["id"] } },
    } satisfies Schema;
    db.transaction(() => engine.install(db.adapter, schema));
    db.adapter.exec("INSERT INTO entry (id, owner, seq) VALUES ('e', 'u', 7)", []);
    db.transaction(() => engine.commit(db.adapter));
    const visibility = { entry: { sql: "owner = ?", params: ["u"] } };
    const first = JSON.parse(
      db.transaction(() =>
        engine.pull(db.adapter, { clientGroupID: "g", userID: "u", cookie: null, visibility }),
      ).body,
    );
    expect(first.rowsPatch).toContainEqual({
      op: "put",
      tableName: "entry",
      value: { id: "e", owner: "u", seq: 7 },
    });
    db.adapter.exec("UPDATE entry SET owner = 'v', seq = 8", []);
    db.transaction(() => engine.commit(db.adapter));
    const after = JSON.parse(
      db.transaction(() =>
        engine.pull(db.adapter, { clientGroupID: "g", userID: "u", cookie: first.cookie, visibility }),
      ).body,
    );
    expect(after.rowsPatch).toEqual([{ op: "del", tableName: "entry", id: { id: "e" } }]);
  });

  it("renames the key of prior tables an earlier engine named seq, and keeps judging deletes", async () => {
    const engine = await testEngine();
    const db = open();
    db.transaction(() => engine.install(db.adapter, todoSchema));
    db.adapter.exec('ALTER TABLE "_weir_prior_todo" RENAME COLUMN _weir_seq TO seq', []);
    expect(db.transaction(() => engine.install(db.adapter, todoSchema))).toEqual({ outcome: "unchanged" });
    const columns = db.adapter.query(
      "SELECT name FROM pragma_table_info('_weir_prior_todo') ORDER BY cid",
      [],
    );
    expect(columns[0]).toEqual(["_weir_seq"]);
    db.adapter.exec("INSERT INTO todo (id, owner, text, done, sort) VALUES ('t', 'u', '', 0, 0)", []);
    db.transaction(() => engine.commit(db.adapter));
    db.adapter.exec("DELETE FROM todo", []);
    db.transaction(() => engine.commit(db.adapter));
    const visibility = { todo: { sql: "owner = ?", params: ["u"] } };
    const pulled = JSON.parse(
      db.transaction(() =>
        engine.pull(db.adapter, { clientGroupID: "g", userID: "u", cookie: 1, visibility }),
      ).body,
    );
    expect(pulled.rowsPatch).toEqual([{ op: "del", tableName: "todo", id: { id: "t" } }]);
  });

  it("migrates an added table or nullable column, and resets clients once", async () => {
    const engine = await testEngine();
    const db = open();
    db.transaction(() => engine.install(db.adapter, todoSchema));
    const grown = {
      tables: {
        todo: {
          ...todoSchema.tables.todo,
          columns: { ...todoSchema.tables.todo.columns, note: { type: "string", nullable: true } },
        },
        tag: { columns: { name: "string" }, primaryKey: ["name"] },
      },
    } satisfies Schema;
    expect(db.transaction(() => engine.install(db.adapter, grown))).toEqual({ outcome: "migrated" });
    const state = engine.state(db.adapter);
    expect(state.floor).toBe(state.watermark);
    db.adapter.exec("INSERT INTO tag (name) VALUES ('x')", []);
    db.adapter.exec(
      "INSERT INTO todo (id, owner, text, done, sort, note) VALUES ('t', 'u', '', 0, 0, 'n')",
      [],
    );
    expect(engine.listChanges(db.adapter, 0, 10).map((change) => change.table)).toEqual(["tag", "todo"]);
  });

  it.each([
    ["a removed column", { id: "string", owner: "string", text: "string", done: "boolean" }],
    ["a changed type", { id: "string", owner: "string", text: "string", done: "boolean", sort: "integer" }],
    ["a new non-nullable column", { ...todoSchema.tables.todo.columns, extra: "string" }],
  ] as const)("refuses %s with schema_mismatch", async (_, columns) => {
    const engine = await testEngine();
    const db = open();
    db.transaction(() => engine.install(db.adapter, todoSchema));
    const changed = { tables: { todo: { columns, primaryKey: ["id"] } } } as unknown as Schema;
    expect(() => db.transaction(() => engine.install(db.adapter, changed))).toThrow(
      expect.objectContaining({ code: "schema_mismatch" }),
    );
  });

  it("lets a replica drop, retype and re-add columns: old values go, and its next ingest resnapshots", async () => {
    const engine = await testEngine();
    const db = open();
    db.transaction(() => engine.install(db.adapter, todoSchema));
    // A host claims a fence when it opens a namespace with an upstream.
    const fence = db.transaction(() => engine.claimFence(db.adapter));
    db.transaction(() =>
      engine.applyUpstream(
        db.adapter,
        {
          watermark: "10",
          tables: reduceUpstreamBatch(todoSchema, [
            {
              tableName: "todo",
              op: "INSERT",
              rowData: { id: "a", owner: "u", text: "old", done: false, sort: 1.5 },
              oldData: null,
            },
          ]).tables,
        },
        { fence },
      ),
    );
    const { text: _text, ...rest } = todoSchema.tables.todo.columns;
    const dropped = { tables: { todo: { columns: rest, primaryKey: ["id"] } } } as Schema;
    expect(db.transaction(() => engine.install(db.adapter, dropped))).toEqual({ outcome: "migrated" });
    expect(engine.upstreamState(db.adapter)).toMatchObject({ cursor: null, snapshot: null });
    const readded = {
      tables: {
        todo: {
          columns: { ...rest, sort: "string", text: { type: "string", nullable: true }, extra: "integer" },
          primaryKey: ["id"],
        },
      },
    } as unknown as Schema;
    expect(db.transaction(() => engine.install(db.adapter, readded))).toEqual({ outcome: "migrated" });
    // Nothing of the dropped column came back, and the retyped one holds no value of the old type.
    expect(db.adapter.query("SELECT id, owner, text, sort, extra FROM todo", [])).toEqual([
      ["a", "u", null, null, null],
    ]);
    // The change capture follows the new columns.
    db.adapter.exec("UPDATE todo SET text = 'new', sort = 's', extra = 1 WHERE id = 'a'", []);
    expect(engine.listChanges(db.adapter, 0, 10).at(-1)).toMatchObject({ table: "todo", key: ["a"] });
  });

  it.each([
    ['a"; DROP TABLE x; --', "a table name with quotes"],
    ["_weir_changes", "a reserved table name"],
    ["sqlite_master", "an sqlite_ name"],
    ["todo) --", "a parenthesis"],
  ])("refuses the table name %j (%s)", async (name) => {
    const engine = await testEngine();
    const db = open();
    const schema = { tables: { [name]: { columns: { id: "string" }, primaryKey: ["id"] } } } as Schema;
    expect(() => engine.install(db.adapter, schema)).toThrow(
      expect.objectContaining({ code: "bad_request" }),
    );
  });

  it("refuses hostile column names, missing or unusable primary keys", async () => {
    const engine = await testEngine();
    const db = open();
    const bad: Schema[] = [
      { tables: { t: { columns: { "x' OR 1=1": "string" }, primaryKey: ["x' OR 1=1"] } } },
      { tables: { t: { columns: { id: "string" }, primaryKey: ["nope"] } } },
      { tables: { t: { columns: { id: "number" }, primaryKey: ["id"] } } },
      { tables: { t: { columns: { id: { type: "string", nullable: true } }, primaryKey: ["id"] } } },
      { tables: { t: { columns: {}, primaryKey: [] } } },
    ];
    for (const schema of bad) {
      expect(() => engine.install(db.adapter, schema)).toThrow(
        expect.objectContaining({ code: "bad_request" }),
      );
    }
  });
});
