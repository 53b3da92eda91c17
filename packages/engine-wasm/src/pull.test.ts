import { describe, expect, it } from "vitest";
import { ENGINE_DATABASES } from "../test/databases.js";
import { Namespace, todoSchema } from "../test/fixtures.js";
import { EngineError } from "./engine-error.js";

const insert = "INSERT INTO todo (id, owner, text, done, sort) VALUES (?, 'u', ?, 0, ?)";

describe.each(ENGINE_DATABASES)("pull on $kind ($build engine)", ({ open, load }) => {
  async function namespace() {
    return new Namespace(await load(), open(), todoSchema);
  }

  it("answers a null cookie with clear and every row, and the group's last mutation ids", async () => {
    const ns = await namespace();
    ns.mutate("g", "c1", (run) => run(insert, ["a", "A", 1]));
    ns.mutate("g", "c1", (run) => run(insert, ["b", "B", 2]));
    const result = ns.pull({ cookie: null });
    expect(result.reset).toBe(true);
    expect(result.json.rowsPatch?.[0]).toEqual({ op: "clear" });
    expect(result.json.rowsPatch?.slice(1).map((op) => op.value?.id)).toEqual(["a", "b"]);
    expect(result.json.lastMutationIDChanges).toEqual({ c1: 2 });
    expect(result.cookie).toBe(2);
  });

  it("answers the current cookie with unchanged, and a future cookie with 409", async () => {
    const ns = await namespace();
    ns.sql(insert, ["a", "A", 1]);
    expect(ns.pull({ cookie: 1 }).json).toEqual({ cookie: 1, unchanged: true });
    const future = () => ns.pull({ cookie: 2 });
    expect(future).toThrow(EngineError);
    expect(future).toThrow(expect.objectContaining({ code: "cookie_from_future" }));
  });

  it("collapses several changes of a row into its current value", async () => {
    const ns = await namespace();
    ns.sql(insert, ["a", "first", 1]);
    const cookie = ns.pull({ cookie: null }).cookie;
    ns.sql("UPDATE todo SET text = 'second' WHERE id = 'a'");
    ns.sql("UPDATE todo SET text = 'third' WHERE id = 'a'");
    ns.sql(insert, ["b", "temporary", 2]);
    ns.sql("DELETE FROM todo WHERE id = 'b'");
    const result = ns.pull({ cookie });
    // b existed for a while after the cookie: an answer cut by a cap could have given the client
    // that state, so it gets b's del (a row never visible since the cookie gets nothing).
    expect(result.json.rowsPatch).toEqual([
      { op: "put", tableName: "todo", value: { id: "a", owner: "u", text: "third", done: false, sort: 1 } },
      { op: "del", tableName: "todo", id: { id: "b" } },
    ]);
  });

  it("sends del for a row the client had", async () => {
    const ns = await namespace();
    ns.sql(insert, ["a", "A", 1]);
    const cookie = ns.pull({ cookie: null }).cookie;
    ns.sql("DELETE FROM todo WHERE id = 'a'");
    expect(ns.pull({ cookie }).json.rowsPatch).toEqual([{ op: "del", tableName: "todo", id: { id: "a" } }]);
  });

  it("cuts at a version boundary under maxChangeRows and reports only covered mutation ids", async () => {
    const ns = await namespace();
    ns.mutate("g", "c1", (run) => {
      run(insert, ["a1", "x", 1]);
      run(insert, ["a2", "x", 2]);
    });
    ns.mutate("g", "c1", (run) => run(insert, ["b", "x", 3]));
    ns.mutate("g", "c2", (run) => run(insert, ["c", "x", 4]));
    const first = ns.pull({ cookie: 0, maxChangeRows: 1 });
    // The first version has two rows: it is always included whole.
    expect(first.json.rowsPatch?.map((op) => op.value?.id)).toEqual(["a1", "a2"]);
    // c1's latest processed mutation (2) is not covered yet, so c1 is not reported at all.
    expect(first.json.lastMutationIDChanges).toEqual({});
    expect(first.cookie).toBe(1);
    const second = ns.pull({ cookie: first.cookie, maxChangeRows: 2 });
    expect(second.json.rowsPatch?.map((op) => op.value?.id)).toEqual(["b", "c"]);
    expect(second.json.lastMutationIDChanges).toEqual({ c1: 2, c2: 1 });
    expect(ns.pull({ cookie: second.cookie }).unchanged).toBe(true);
  });

  it("reads only the versions a capped pull far behind can send, and catches up in order", async () => {
    const db = open();
    // The largest result any statement handed back, to see what a pull read.
    let widest = 0;
    const inner = db.adapter;
    db.adapter = {
      query: (sql, params) => {
        const rows = inner.query(sql, params);
        widest = Math.max(widest, rows.length);
        return rows;
      },
      exec: (sql, params) => inner.exec(sql, params),
    };
    const ns = new Namespace(await load(), db, todoSchema);
    // A row changed in each of the first 5 versions, then 300 versions of one new row each.
    ns.sql(insert, ["hot", "0", 0]);
    for (let i = 1; i < 5; i++) ns.sql("UPDATE todo SET text = ? WHERE id = 'hot'", [String(i)]);
    for (let i = 0; i < 300; i++) ns.mutate("g", "c1", (run) => run(insert, [`r${i}`, "x", i]));
    widest = 0;
    const first = ns.pull({ cookie: 0, maxChangeRows: 10 });
    // The window ends at the 11th change logged after the cookie (version 11): the hot row's
    // five changes count five, so the answer holds 7 rows, fewer than the cap, and says more.
    const ids = first.json.rowsPatch?.map((op) => op.value?.id);
    expect(ids).toEqual(["hot", ...["r0", "r1", "r2", "r3", "r4", "r5"]]);
    expect(first.cookie).toBe(11);
    expect(first.more).toBe(true);
    // c1's last mutation (300) lies beyond the window: not reported until an answer covers it.
    expect(first.json.lastMutationIDChanges).toEqual({});
    expect(widest).toBeLessThanOrEqual(11);
    const seen = new Set(first.json.rowsPatch?.map((op) => String(op.value?.id)));
    let cookie = first.cookie;
    for (let pulls = 0; pulls < 100; pulls++) {
      widest = 0;
      const next = ns.pull({ cookie, maxChangeRows: 10 });
      if (next.unchanged) break;
      expect(widest).toBeLessThanOrEqual(11);
      expect(next.json.rowsPatch?.length).toBe(cookie < 295 ? 10 : 305 - cookie);
      for (const op of next.json.rowsPatch ?? []) seen.add(String(op.value?.id));
      expect(next.json.lastMutationIDChanges).toEqual(next.cookie === 305 ? { c1: 300 } : {});
      cookie = next.cookie;
    }
    expect(cookie).toBe(305);
    expect(seen.size).toBe(301);
  });

  it("cuts under maxChangeBytes and still always makes progress", async () => {
    const ns = await namespace();
    for (let i = 0; i < 5; i++) ns.sql(insert, [`r${i}`, "x".repeat(100), i]);
    const seen: string[] = [];
    let cookie = 0;
    for (let pulls = 0; pulls < 10; pulls++) {
      const result = ns.pull({ cookie, maxChangeBytes: 1 });
      if (result.unchanged) break;
      expect(result.json.rowsPatch).toHaveLength(1);
      seen.push(String(result.json.rowsPatch?.[0]?.value?.id));
      cookie = result.cookie;
    }
    expect(seen).toEqual(["r0", "r1", "r2", "r3", "r4"]);
  });

  it("sends every version since the cookie in one pull when no cap is near", async () => {
    const ns = await namespace();
    for (let i = 0; i < 60; i++) ns.mutate("g", "c1", (run) => run(insert, [`v${i}`, "x".repeat(50), i]));
    const result = ns.pull({ cookie: 1 });
    expect(result.cookie).toBe(60);
    expect(result.json.rowsPatch).toHaveLength(59);
    expect(result.json.lastMutationIDChanges).toEqual({ c1: 60 });
  });

  it("caps by the payloads' size in bytes, at a version boundary", async () => {
    const ns = await namespace();
    // Each payload is about 150 bytes; "é" is two bytes in UTF-8.
    for (let i = 0; i < 10; i++) ns.mutate("g", "c1", (run) => run(insert, [`w${i}`, "é".repeat(50), i]));
    const all = ns.pull({ cookie: 0 });
    const size = new TextEncoder().encode(JSON.stringify(all.json.rowsPatch?.[0])).length;
    // SQLite writes REALs as "1.0" where JSON.stringify writes "1": a few bytes of slack.
    const capped = ns.pull({ cookie: 0, maxChangeBytes: size * 4 + 16 });
    expect(capped.json.rowsPatch).toHaveLength(4);
    expect(capped.cookie).toBe(4);
  });

  it("writes nothing when caught up", async () => {
    const ns = await namespace();
    ns.sql(insert, ["a", "A", 1]);
    const { cookie } = ns.pull({ cookie: null });
    const before = ns.db.totalChanges();
    for (let i = 0; i < 5; i++) expect(ns.pull({ cookie }).unchanged).toBe(true);
    expect(ns.db.totalChanges()).toBe(before);
  });

  it("refuses another user's client group with 403", async () => {
    const ns = await namespace();
    ns.pull({ cookie: null, clientGroupID: "mine", userID: "alice" });
    expect(() => ns.pull({ cookie: null, clientGroupID: "mine", userID: "mallory" })).toThrow(
      expect.objectContaining({ code: "forbidden" }),
    );
    expect(() => ns.engine.claimGroup(ns.db.adapter, "mine", "mallory")).toThrow(
      expect.objectContaining({ code: "forbidden" }),
    );
    expect(() => ns.engine.claimGroup(ns.db.adapter, "mine", "alice")).not.toThrow();
  });

  it("speaks the Replicache dialect from the same changes", async () => {
    const ns = await namespace();
    ns.mutate("g", "c1", (run) => run(insert, ["a/b~c", "A", 1]));
    const reset = ns.pull({ cookie: null, dialect: "replicache" });
    expect(reset.json).toEqual({
      cookie: 1,
      lastMutationIDChanges: { c1: 1 },
      patch: [
        { op: "clear" },
        {
          op: "put",
          key: "todo/a~1b~0c",
          value: { id: "a/b~c", owner: "u", text: "A", done: false, sort: 1 },
        },
      ],
    });
    ns.sql("DELETE FROM todo");
    expect(ns.pull({ cookie: 1, dialect: "replicache" }).json.patch).toEqual([
      { op: "del", key: "todo/a~1b~0c" },
    ]);
    expect(ns.pull({ cookie: 2, dialect: "replicache" }).json).toEqual({
      cookie: 2,
      lastMutationIDChanges: {},
      patch: [],
    });
  });
});

describe.each(ENGINE_DATABASES)(
  "caught-up pulls without a transaction on $kind ($build engine)",
  ({ open, load }) => {
    it("answers a caught-up pull from one statement, and defers every other pull", async () => {
      const ns = new Namespace(await load(), open(), todoSchema);
      const { engine, db } = ns;
      const input = { clientGroupID: "g", userID: "u" };
      // A new group must be registered (a write): not here.
      expect(engine.pullIfCaughtUp(db.adapter, { ...input, cookie: 0 })).toBeNull();
      ns.pull({ cookie: null });
      ns.sql(insert, ["a", "A", 1]);
      expect(engine.pullIfCaughtUp(db.adapter, { ...input, cookie: 0 })).toBeNull();
      expect(engine.pullIfCaughtUp(db.adapter, { ...input, cookie: null })).toBeNull();
      const before = db.totalChanges();
      expect(engine.pullIfCaughtUp(db.adapter, { ...input, cookie: 1 })).toMatchObject({
        unchanged: true,
        cookie: 1,
        body: '{"cookie":1,"unchanged":true}',
      });
      expect(db.totalChanges()).toBe(before);
      expect(() => engine.pullIfCaughtUp(db.adapter, { ...input, cookie: 2 })).toThrow(
        expect.objectContaining({ code: "cookie_from_future" }),
      );
      expect(() => engine.pullIfCaughtUp(db.adapter, { ...input, userID: "other", cookie: 1 })).toThrow(
        expect.objectContaining({ code: "forbidden" }),
      );
    });
  },
);
