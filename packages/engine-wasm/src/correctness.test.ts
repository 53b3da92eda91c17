import { describe, expect, it } from "vitest";
import { DATABASES, testEngine } from "../test/databases.js";
import { cardSchema, Namespace, ownerFilter, todoSchema } from "../test/fixtures.js";

// Each of these once let a client keep a row a fresh pull of the same user would not show, or
// let a pull break its caps.

const insert = "INSERT INTO todo (id, owner, text, done, sort) VALUES (?, ?, ?, 0, 0)";
type Op = { op: string; value?: Record<string, unknown>; id?: Record<string, unknown> };

/** Applies patches as a client does and pulls until caught up; answers the rows held. */
function catchUp(ns: Namespace, copy: Map<string, unknown>, from: number | null, input: object = {}) {
  let cookie = from;
  for (let pulls = 0; pulls < 100; pulls++) {
    const result = ns.pull({ cookie, ...input });
    cookie = result.cookie;
    if (result.unchanged) return cookie;
    for (const op of (result.json.rowsPatch ?? []) as Op[]) {
      if (op.op === "clear") copy.clear();
      else if (op.op === "put") copy.set(String(op.value!.id), op.value);
      else copy.delete(String(op.id!.id));
    }
  }
  throw new Error("never caught up");
}

describe.each(DATABASES)("pull correctness on $kind", ({ open }) => {
  it("sends del for a row a capped answer delivered ahead of its cookie", async () => {
    const ns = new Namespace(await testEngine(), open(), todoSchema);
    ns.sql(insert, ["R", "u", "first"]);
    const copy = new Map<string, unknown>();
    const cookie = catchUp(ns, copy, null);
    ns.sql("DELETE FROM todo WHERE id = 'R'");
    ns.sql(insert, ["S", "u", "s"]);
    ns.sql(insert, ["R", "u", "again"]);
    // One row per answer: R's current value arrives with a cookie before S and R's return.
    const capped = ns.pull({ cookie, maxChangeRows: 1 });
    expect(capped.json.rowsPatch).toEqual([
      { op: "put", tableName: "todo", value: { id: "R", owner: "u", text: "again", done: false, sort: 0 } },
    ]);
    copy.set("R", capped.json.rowsPatch![0]!.value);
    ns.sql("DELETE FROM todo WHERE id = 'R'");
    catchUp(ns, copy, capped.cookie, { maxChangeRows: 1 });
    expect([...copy.keys()]).toEqual(["S"]);
  });

  // A filter keys do not narrow (`owner IN (?)`) reads every change since the cookie; `owner = ?`
  // reads only those whose images were alice's, so x's change while bob's is not read: the
  // capped answer gives y first, and x the next.
  it.each([
    { filter: "owner IN (?)", first: "x" },
    { filter: "owner = ?", first: "y" },
  ])(
    "takes back a row a capped answer gave, once it leaves the user's view ($filter)",
    async ({ filter, first }) => {
      const ns = new Namespace(await testEngine(), open(), todoSchema);
      const alice = {
        userID: "alice",
        visibility: { todo: { sql: filter, params: ["alice"] } },
        maxChangeRows: 1,
      };
      ns.sql(insert, ["x", "bob", "x"]);
      const copy = new Map<string, unknown>();
      const cookie = catchUp(ns, copy, null, alice);
      // x changes while still bob's, then becomes alice's after another version.
      ns.sql("UPDATE todo SET text = 'still bob' WHERE id = 'x'");
      ns.sql(insert, ["y", "alice", "y"]);
      ns.sql("UPDATE todo SET owner = 'alice' WHERE id = 'x'");
      const capped = ns.pull({ cookie, ...alice });
      expect(capped.json.rowsPatch?.map((op) => (op as Op).value?.id)).toEqual([first]);
      copy.set(first, (capped.json.rowsPatch![0] as Op).value);
      ns.sql("UPDATE todo SET owner = 'bob' WHERE id = 'x'");
      catchUp(ns, copy, capped.cookie, alice);
      expect([...copy.keys()]).toEqual(["y"]);
    },
  );

  it("cuts between versions wherever a version would pass the caps, not only at its first row", async () => {
    const ns = new Namespace(await testEngine(), open(), todoSchema);
    ns.sql(insert, ["a", "u", "a"]);
    ns.mutate("g", "c", (run) => {
      for (let i = 0; i < 50; i++) run(insert, [`b${i}`, "u", "b"]);
    });
    ns.sql(insert, ["c", "u", "c"]);
    const first = ns.pull({ cookie: 0, maxChangeRows: 3 });
    expect(first.json.rowsPatch).toHaveLength(1);
    expect(first.cookie).toBe(1);
    // The first version of an answer is always whole, even beyond the cap.
    const second = ns.pull({ cookie: first.cookie, maxChangeRows: 3 });
    expect(second.json.rowsPatch).toHaveLength(50);
    expect(second.cookie).toBe(2);
    const bytes = (result: { body: string }) => new TextEncoder().encode(result.body).length;
    const all = ns.pull({ cookie: 0 });
    const byBytes = ns.pull({ cookie: 0, maxChangeBytes: bytes(all) / 10 });
    expect(byBytes.json.rowsPatch).toHaveLength(1);
  });

  it("compares pre-images with the column's type, as the live table does", async () => {
    const ns = new Namespace(await testEngine(), open(), cardSchema);
    const card = "INSERT INTO card (id, uid, score, flag, label, data) VALUES (?, ?, ?, ?, NULL, ?)";
    const exact = 0.30000000000000004;
    ns.sql(card, ["i", 42, 1, 0, null]);
    ns.sql(card, ["r", 1, exact, 0, null]);
    ns.sql(card, ["b", 1, 1, 1, null]);
    ns.sql(card, ["d", 1, 1, 0, new Uint8Array([0xca, 0xfe])]);
    // Claims bound as strings, as a JWT carries them; the live table matches them by affinity.
    const filters = {
      i: { card: { sql: "uid = ?", params: ["42"] } },
      r: { card: { sql: "score = ?", params: [String(exact)] } },
      b: { card: { sql: "flag = ?", params: ["1"] } },
      d: { card: { sql: "data = ?", params: [new Uint8Array([0xca, 0xfe])] } },
    };
    for (const [id, visibility] of Object.entries(filters)) {
      const input = { userID: id, clientGroupID: `g-${id}`, visibility };
      const copy = new Map<string, unknown>();
      const cookie = catchUp(ns, copy, null, input);
      expect([...copy.keys()]).toEqual([id]);
      ns.sql("UPDATE card SET uid = 7, score = 0.5, flag = 0, data = NULL WHERE id = ?", [id]);
      catchUp(ns, copy, cookie, input);
      expect(copy.size).toBe(0);
    }
  });
});

describe.each(DATABASES)("change capture on $kind", ({ open }) => {
  const replacements = [
    [
      "INSERT OR REPLACE",
      "INSERT OR REPLACE INTO todo (id, owner, text, done, sort) VALUES ('a', 'bob', 'b', 0, 0)",
    ],
    ["REPLACE", "REPLACE INTO todo (id, owner, text, done, sort) VALUES ('a', 'bob', 'b', 0, 0)"],
    [
      "UPSERT",
      "INSERT INTO todo (id, owner, text, done, sort) VALUES ('a', 'bob', 'b', 0, 0) ON CONFLICT (id) DO UPDATE SET owner = excluded.owner",
    ],
    ["UPDATE OR REPLACE of a key", "UPDATE OR REPLACE todo SET id = 'a' WHERE id = 'z'"],
  ] as const;

  it.each(replacements)("sees the row %s takes away", async (_, sql) => {
    const ns = new Namespace(await testEngine(), open(), todoSchema);
    ns.sql(insert, ["a", "alice", "a"]);
    ns.sql(insert, ["z", "bob", "z"]);
    const alice = { userID: "alice", visibility: ownerFilter("alice") };
    const copy = new Map<string, unknown>();
    const cookie = catchUp(ns, copy, null, alice);
    expect([...copy.keys()]).toEqual(["a"]);
    ns.sql(sql);
    catchUp(ns, copy, cookie, alice);
    expect(copy.size).toBe(0);
  });

  it("commits writes made outside a push as a version incremental pulls see", async () => {
    const ns = new Namespace(await testEngine(), open(), todoSchema);
    const copy = new Map<string, unknown>();
    const cookie = catchUp(ns, copy, null);
    const watermark = ns.db.transaction(() => {
      ns.db.adapter.exec(insert, ["outside", "u", "x"]);
      return ns.engine.commit(ns.db.adapter).watermark;
    });
    expect(watermark).toBe(cookie + 1);
    catchUp(ns, copy, cookie);
    expect([...copy.keys()]).toEqual(["outside"]);
    // Nothing pending: committing again makes no version.
    expect(ns.db.transaction(() => ns.engine.commit(ns.db.adapter))).toEqual({ watermark, committed: false });
  });
});
