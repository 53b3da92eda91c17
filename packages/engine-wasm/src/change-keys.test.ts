import { describe, expect, it } from "vitest";
import { DATABASES, testEngine } from "../test/databases.js";
import { cardSchema, Namespace, ownerFilter, todoSchema } from "../test/fixtures.js";
import { random } from "../test/query-model.js";
import type { Visibility } from "./types.js";

const insert = "INSERT INTO todo (id, owner, text, done, sort) VALUES (?, ?, 'x', 0, 0)";
const ids = (patch: { op: string; value?: Record<string, unknown>; id?: Record<string, unknown> }[] = []) =>
  patch.map((op) => `${op.op} ${String((op.value ?? op.id)?.id)}`);

/**
 * Makes the log rows of the changes to bob's rows (ids b*) unreadable: a pull that reads one
 * fails (its key is no longer JSON), so a pull that answers read none of them.
 */
function poisonChangesOfBob(ns: Namespace): number {
  return ns.db.adapter.exec(
    "UPDATE _weir_changes SET pk = 'unreadable' WHERE tbl = 'todo' AND json_extract(pk, '$[0]') LIKE 'b%'",
    [],
  );
}

describe.each(DATABASES)("pulls read through change keys on $kind", ({ open }) => {
  async function namespace() {
    return new Namespace(await testEngine(), open(), todoSchema);
  }

  it("an incremental pull by alice reads alice's changes only", async () => {
    const ns = await namespace();
    ns.sql(insert, ["a0", "alice"]);
    const alice = { userID: "alice", clientGroupID: "ga", visibility: ownerFilter("alice") };
    const { cookie } = ns.pull({ cookie: null, ...alice });
    for (let i = 0; i < 20; i++) ns.sql(insert, [`b${i}`, "bob"]);
    ns.sql("UPDATE todo SET text = 'edited' WHERE id = 'a0'");
    ns.sql(insert, ["a1", "alice"]);
    for (let i = 0; i < 20; i++) ns.sql("UPDATE todo SET text = 'again' WHERE id = ?", [`b${i}`]);
    // Some pull notes the keys of the changes since they were last noted (once, whoever pulls):
    // bob's here. Alice's pull then reads hers only.
    ns.pull({ cookie, userID: "bob", clientGroupID: "gb", visibility: ownerFilter("bob") });
    expect(ns.db.transaction(() => poisonChangesOfBob(ns))).toBe(40);
    const pulled = ns.pull({ cookie, ...alice });
    expect(ids(pulled.json.rowsPatch)).toEqual(["put a0", "put a1"]);
    expect(pulled.cookie).toBe(ns.pull({ cookie: pulled.cookie, ...alice }).cookie);
    // A filter keys do not narrow reads every change since the cookie, bob's too.
    const whole: Visibility = { todo: { sql: "owner IN (?)", params: ["alice"] } };
    expect(() => ns.pull({ cookie, userID: "alice", clientGroupID: "gw", visibility: whole })).toThrow(
      /JSON/,
    );
  });

  it("a row that leaves alice's view is taken back, one that enters it is put, in any transaction", async () => {
    const ns = await namespace();
    ns.sql(insert, ["a1", "alice"]);
    ns.sql(insert, ["b1", "bob"]);
    ns.sql(insert, ["b2", "bob"]);
    const alice = { userID: "alice", visibility: ownerFilter("alice") };
    const { cookie } = ns.pull({ cookie: null, ...alice });
    ns.mutate("g", "c", (run) => {
      // a1 goes to bob, comes back and leaves again; b1 passes through alice; b2 ends hers.
      run("UPDATE todo SET owner = 'bob' WHERE id = 'a1'");
      run("UPDATE todo SET owner = 'alice' WHERE id = 'a1'");
      run("UPDATE todo SET owner = 'carol' WHERE id = 'a1'");
      run("UPDATE todo SET owner = 'alice' WHERE id = 'b1'");
      run("UPDATE todo SET owner = 'bob', text = 'y' WHERE id = 'b1'");
      run("UPDATE todo SET owner = 'alice' WHERE id = 'b2'");
    });
    expect(ids(ns.pull({ cookie, ...alice }).json.rowsPatch)).toEqual(["del a1", "put b2"]);
    // A row whose key changes: its old key is taken back, its new one put.
    const next = ns.pull({ cookie, ...alice }).cookie;
    ns.sql("UPDATE todo SET id = 'b3' WHERE id = 'b2'");
    ns.sql("DELETE FROM todo WHERE id = 'b1'");
    expect(ids(ns.pull({ cookie: next, ...alice }).json.rowsPatch)).toEqual(["del b2", "put b3"]);
  });

  // The keys of a long backlog are noted in one statement: they must be the keys noted a few
  // changes at a time, change for change, whatever the writes (several to a row in one
  // transaction, deletes, rows inserted again, keys changed).
  it.each([1, 2, 3, 4])(
    "notes the same keys in bulk as pull by pull, random writes, seed %i",
    async (seed) => {
      const lcg = random(seed);
      const next = (n: number) => Math.floor((lcg(2 ** 30) / 2 ** 30) * n);
      const owners = ["alice", "bob", "carol"];
      const alice = { userID: "alice", clientGroupID: "ga", visibility: ownerFilter("alice") };
      const [bulk, step] = [await namespace(), await namespace()];
      for (const ns of [bulk, step]) ns.pull({ cookie: null, ...alice });
      const writes: Array<[string, (string | number)[]]> = [];
      for (let version = 0; version < 60; version++) {
        writes.length = 0;
        for (let n = 1 + next(4); n > 0; n--) {
          const id = `t${next(8)}`;
          const owner = owners[next(owners.length)]!;
          const kind = next(6);
          if (kind === 0)
            writes.push([
              "INSERT OR REPLACE INTO todo (id, owner, text, done, sort) VALUES (?, ?, 'x', 0, 0)",
              [id, owner],
            ]);
          else if (kind === 1) writes.push(["DELETE FROM todo WHERE id = ?", [id]]);
          else if (kind === 2) writes.push(["UPDATE todo SET text = text || '!' WHERE id = ?", [id]]);
          else if (kind === 3)
            writes.push(["UPDATE OR REPLACE todo SET id = ? WHERE id = ?", [`t${next(8)}`, id]]);
          else writes.push(["UPDATE todo SET owner = ? WHERE id = ?", [owner, id]]);
        }
        for (const ns of [bulk, step]) {
          ns.mutate("w", "w", (run) => {
            for (const [sql, params] of writes) run(sql, params);
          });
        }
        if (next(3) === 0) step.pull({ cookie: null, ...alice });
      }
      for (const ns of [bulk, step]) ns.pull({ cookie: null, ...alice });
      const keys = (ns: Namespace) =>
        ns.db.adapter.query("SELECT key_id, val, seq FROM _weir_change_keys ORDER BY key_id, val, seq", []);
      expect(keys(bulk).length).toBeGreaterThan(60);
      expect(keys(bulk)).toEqual(keys(step));
    },
  );

  it("reads a table whole for cookies from before its column was keyed", async () => {
    const ns = await namespace();
    ns.sql(insert, ["a1", "alice"]);
    // Bob's pulls never key the column: his filter is not narrowed by keys.
    const bob = {
      userID: "bob",
      clientGroupID: "gb",
      visibility: { todo: { sql: "owner IN (?)", params: ["bob"] } },
    };
    const old = ns.pull({ cookie: null, ...bob }).cookie;
    ns.sql(insert, ["a2", "alice"]);
    ns.sql("UPDATE todo SET owner = 'alice' WHERE id = 'a1'");
    // Alice's first pull keys the column; a group of hers behind from before still gets it all.
    ns.pull({ cookie: null, userID: "alice", clientGroupID: "ga", visibility: ownerFilter("alice") });
    ns.sql(insert, ["a3", "alice"]);
    const behind = ns.pull({
      cookie: old,
      userID: "alice",
      clientGroupID: "ga",
      visibility: ownerFilter("alice"),
    });
    expect(ids(behind.json.rowsPatch)).toEqual(["put a2", "put a1", "put a3"]);
  });

  it("narrows by each key of an OR, and by integer keys", async () => {
    const ns = new Namespace(await testEngine(), open(), cardSchema);
    const add = "INSERT INTO card (id, uid, score, flag, label) VALUES (?, ?, 0, 0, ?)";
    ns.sql(add, ["c1", 1, "one"]);
    const visibility: Visibility = { card: { sql: "uid = ? OR label = ?", params: [1, "shared"] } };
    const { cookie } = ns.pull({ cookie: null, userID: "1", visibility });
    ns.sql(add, ["c2", 2, "shared"]);
    ns.sql(add, ["c3", 2, "other"]);
    ns.sql("UPDATE card SET uid = 2 WHERE id = 'c1'");
    expect(ids(ns.pull({ cookie, userID: "1", visibility }).json.rowsPatch)).toEqual(["put c2", "del c1"]);
    const keyed = ns.db.adapter.query("SELECT col FROM _weir_keyed ORDER BY col", []);
    expect(keyed).toEqual([["label"], ["uid"]]);
  });

  it("prunes exactly the pruned changes' keys, found by seq", async () => {
    const ns = await namespace();
    for (const owner of ["alice", "bob", "carol"]) ns.sql(insert, [`${owner}-1`, owner]);
    for (const owner of ["alice", "bob", "carol"]) {
      ns.pull({ cookie: null, userID: owner, clientGroupID: owner, visibility: ownerFilter(owner) });
    }
    for (let i = 0; i < 12; i++) {
      ns.sql("UPDATE todo SET text = ? WHERE id = ?", [`t${i}`, `${["alice", "bob", "carol"][i % 3]}-1`]);
      if (i % 4 === 0) ns.sql("UPDATE todo SET owner = 'bob' WHERE id = 'alice-1'");
      if (i % 4 === 2) ns.sql("UPDATE todo SET owner = 'alice' WHERE id = 'alice-1'");
    }
    ns.pull({ cookie: null, userID: "alice", clientGroupID: "alice", visibility: ownerFilter("alice") });
    const keys = () =>
      ns.db.adapter.query("SELECT key_id, val, seq FROM _weir_change_keys ORDER BY 1, 2, 3", []);
    const all = keys();
    expect(all.length).toBeGreaterThan(12);
    // Whole batches (every change up to the floor) and batches cut by the limit.
    for (const [retain, limit] of [
      [14, 1000],
      [10, 3],
      [10, 1000],
    ] as const) {
      ns.db.transaction(() => ns.engine.prune(ns.db.adapter, retain, limit));
      const kept = new Set(ns.db.adapter.query("SELECT seq FROM _weir_changes", []).map(([seq]) => seq));
      expect(keys()).toEqual(all.filter(([, , seq]) => kept.has(seq)));
    }
    expect(keys().length).toBeLessThan(all.length);
    // The keys are deleted by seq through an index, not by a scan of every key.
    const plan = ns.db.adapter.query("EXPLAIN QUERY PLAN DELETE FROM _weir_change_keys WHERE seq < ?", [1]);
    expect(plan.map((row) => row.at(-1)).join("\n")).toMatch(/USING (COVERING )?INDEX _weir_change_keys_seq/);
  });

  it("prunes the keys with the changes, and a migration forgets them", async () => {
    const ns = await namespace();
    ns.sql(insert, ["a1", "alice"]);
    ns.pull({ cookie: null, userID: "alice", visibility: ownerFilter("alice") });
    for (let i = 0; i < 5; i++) ns.sql("UPDATE todo SET text = ? WHERE id = 'a1'", [`t${i}`]);
    const count = () => Number(ns.db.adapter.query("SELECT count(*) FROM _weir_change_keys", [])[0]![0]);
    // Writes note no keys; the next pull notes them (alice's, before and after each change).
    expect(count()).toBe(0);
    ns.pull({ cookie: 1, userID: "alice", visibility: ownerFilter("alice") });
    expect(count()).toBe(5);
    ns.db.transaction(() => ns.engine.prune(ns.db.adapter, 2));
    expect(count()).toBe(2);
    const wider = {
      tables: {
        todo: {
          ...todoSchema.tables.todo,
          columns: { ...todoSchema.tables.todo.columns, note: { type: "string", nullable: true } },
        },
      },
    };
    ns.db.transaction(() => ns.engine.install(ns.db.adapter, wider as typeof todoSchema));
    expect(count()).toBe(0);
    expect(ns.db.adapter.query("SELECT count(*) FROM _weir_keyed", [])).toEqual([[0]]);
  });
});
