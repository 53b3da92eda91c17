import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DATABASES, openBetterSqlite, testEngine } from "../test/databases.js";
import { Namespace, todoSchema } from "../test/fixtures.js";
import type { Engine, SqlAdapter } from "./index.js";

const insert = "INSERT INTO todo (id, owner, text, done, sort) VALUES (?, 'u', 'x', 0, 0)";
const ref = (clientID: string, mutationID: number, clientGroupID = "g") => ({
  clientGroupID,
  clientID,
  mutationID,
});
const storedRows = (db: SqlAdapter) => Number(db.query("SELECT count(*) FROM _weir_clients", [])[0]![0]);
const lastID = (engine: Engine, db: SqlAdapter, clientID: string, clientGroupID = "g") =>
  engine.preflight(db, ref(clientID, 1, clientGroupID)).lastMutationID;

describe.each(DATABASES)("a client's record on $kind", ({ open }) => {
  async function namespace() {
    return new Namespace(await testEngine(), open(), todoSchema);
  }

  it("a run of one client's pushes keeps its record in the commit marker, not a row of its own", async () => {
    const ns = await namespace();
    const { engine, db } = ns;
    for (let i = 0; i < 3; i++) ns.mutate("g", "a", (sql) => sql(insert, [`a${i}`]));
    expect(storedRows(db.adapter)).toBe(0);
    expect(lastID(engine, db.adapter, "a")).toBe(3);
    // Another client's push takes the head over: a's record goes to its row.
    ns.mutate("g", "b", (sql) => sql(insert, ["b0"]));
    expect(storedRows(db.adapter)).toBe(1);
    // A commit that is no push does too.
    db.transaction(() => {
      db.adapter.exec(insert, ["w0"]);
      engine.commit(db.adapter);
    });
    expect(storedRows(db.adapter)).toBe(2);
    expect([lastID(engine, db.adapter, "a"), lastID(engine, db.adapter, "b")]).toEqual([3, 1]);
  });

  it("keeps every last id exact across head moves, batches, other commits, rollbacks and retention", async () => {
    const ns = await namespace();
    const { engine, db } = ns;
    const finalize = (clientID: string, mutationID: number, clientGroupID = "g") =>
      db.transaction(() => engine.finalize(db.adapter, ref(clientID, mutationID, clientGroupID)));
    const ids = () =>
      Object.fromEntries(
        engine
          .clients(db.adapter)
          .map((client) => [`${client.clientGroupID}/${client.clientID}`, client.lastMutationID]),
      );
    finalize("a", 1);
    finalize("a", 2);
    finalize("b", 1);
    finalize("a", 3, "h");
    const cookie = engine.state(db.adapter).watermark;
    finalize("a", 4);
    // A batch whose last client is not the head's: the head's client (a) is among the others.
    db.transaction(() =>
      engine.finalizeBatch(db.adapter, "g", [
        { clientID: "a", mutationID: 5 },
        { clientID: "c", mutationID: 1 },
      ]),
    );
    // A batch whose last client is the head's, with another client before it.
    db.transaction(() =>
      engine.finalizeBatch(db.adapter, "g", [
        { clientID: "b", mutationID: 2 },
        { clientID: "c", mutationID: 2 },
      ]),
    );
    // A push that rolls back after its finalize leaves the head as it was.
    expect(() =>
      db.transaction(() => {
        engine.finalize(db.adapter, ref("d", 1));
        throw new Error("the host failed after finalize");
      }),
    ).toThrow("after finalize");
    const expected = { "g/a": 5, "g/b": 2, "g/c": 2, "h/a": 3 };
    expect(ids()).toEqual(expected);
    expect(lastID(engine, db.adapter, "a")).toBe(5);
    expect(lastID(engine, db.adapter, "a", "h")).toBe(3);
    expect(lastID(engine, db.adapter, "d")).toBe(0);
    expect(ns.pull({ cookie }).json.lastMutationIDChanges).toEqual({ a: 5, b: 2, c: 2 });
    db.transaction(() => engine.claimGroup(db.adapter, "g", "u"));
    expect(engine.groupMutationIDs(db.adapter, "g", "u")).toEqual({ a: 5, b: 2, c: 2 });
    // Retention keeps the newest marker, and with it the head's record.
    db.transaction(() => engine.prune(db.adapter, 0));
    expect(engine.state(db.adapter)).toMatchObject({ changes: 0, clients: 4 });
    expect(ids()).toEqual(expected);
    expect(ns.pull({ cookie: engine.state(db.adapter).watermark }).unchanged).toBe(true);
    finalize("c", 3);
    expect(ids()).toEqual({ ...expected, "g/c": 3 });
  });
});

describe("a namespace file written before client records moved into the commit marker", () => {
  const dir = mkdtempSync(join(tmpdir(), "weir-push-record-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("reads its clients' rows and goes on from them, across a reopen", async () => {
    const file = join(dir, "ns.db");
    const engine = await testEngine();
    let db = openBetterSqlite(file);
    new Namespace(engine, db, todoSchema);
    // As an earlier engine left it: every record a row, every marker without one.
    db.transaction(() => {
      db.adapter.exec(insert, ["old"]);
      db.adapter.exec("INSERT INTO _weir_clients VALUES ('g', 'a', 7, 1), ('g', 'b', 2, 1)", []);
      engine.commit(db.adapter);
    });
    expect(db.adapter.query("SELECT DISTINCT pk FROM _weir_changes WHERE tbl = ''", [])).toEqual([["[]"]]);
    db.close();
    db = openBetterSqlite(file);
    db.transaction(() => engine.install(db.adapter, todoSchema));
    expect(lastID(engine, db.adapter, "a")).toBe(7);
    const reopened = new Namespace(engine, db, todoSchema);
    expect(reopened.pull({ cookie: 0 }).json.lastMutationIDChanges).toEqual({ a: 7, b: 2 });
    db.transaction(() => engine.finalize(db.adapter, ref("a", 8)));
    db.close();
    db = openBetterSqlite(file);
    db.transaction(() => engine.install(db.adapter, todoSchema));
    expect(lastID(engine, db.adapter, "a")).toBe(8);
    expect(lastID(engine, db.adapter, "b")).toBe(2);
    expect(new Namespace(engine, db, todoSchema).pull({ cookie: 1 }).json.lastMutationIDChanges).toEqual({
      a: 8,
    });
    db.close();
  });
});
