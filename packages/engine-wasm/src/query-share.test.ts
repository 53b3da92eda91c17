import { describe, expect, it } from "vitest";
import { ClientRows, channelMessages, chatSchema, groupClients } from "../test/chat.js";
import { DATABASES, testEngine } from "../test/databases.js";
import { Namespace } from "../test/fixtures.js";
import type { QueryPatchOp, Visibility } from "./types.js";

// A query a group adds (or evaluates afresh on a reset) takes its rows from another group that
// holds the same query under the same visibility, at the watermark or behind it with no change
// since that can affect the query: the rows must be exactly what evaluating it would give, and no
// group may take rows it could not see or that are out of date.
const query = channelMessages("c1", 10);
const put = { op: "put", hash: "h", name: "channel", args: ["c1"], ast: query } satisfies QueryPatchOp;
const authoredBy = (authorId: string): Visibility => ({
  message: { sql: "authorId = ?", params: [authorId] },
});

describe.each(DATABASES)("query rows copied between groups on $kind", ({ open }) => {
  async function chat() {
    const ns = new Namespace(await testEngine(), open(), chatSchema);
    ns.sql("INSERT INTO channel VALUES ('c1', 'one')");
    ns.sql("INSERT INTO user VALUES ('u1', 'Ann'), ('u2', 'Bo')");
    ns.sql("INSERT INTO message VALUES ('m1', 'c1', 'u1', 1, 'a'), ('m2', 'c1', 'u2', 2, 'b')");
    return { ns, ...groupClients(ns, put) };
  }

  it("copies the rows of a group holding the query at the watermark", async () => {
    const { pull, expected, keys } = await chat();
    expect(pull("g1").queriesCopied).toBe(0);
    const second = pull("g2");
    expect(second.queriesCopied).toBe(1);
    expect(second.queriesRecomputed).toBe(1);
    expect(second.queryRowsExamined).toBeGreaterThan(0);
    expect(keys("g2")).toEqual(expected());
    expect(keys("g2")).toEqual(keys("g1"));
    // A reset evaluates afresh, and copies too.
    expect(pull("g2", { cookie: null }).queriesCopied).toBe(1);
    expect(keys("g2")).toEqual(expected());
  });

  it("copies only the same query: a hash alike is not enough", async () => {
    const { ns, pull } = await chat();
    ns.sql("INSERT INTO message VALUES ('m3', 'c2', 'u1', 3, 'c')");
    pull("g1");
    const other = channelMessages("c2", 10);
    const result = ns.pull({
      cookie: null,
      clientGroupID: "g2",
      queries: { patch: [{ ...put, args: ["c2"], ast: other }] },
    });
    expect(result.queriesCopied).toBe(0);
    const client = new ClientRows();
    client.apply(result.json as never, chatSchema);
    expect(client.keys()).toEqual(['message/["m3"]', 'user/["u1"]']);
  });

  it("copies a query at a time when no group holds the same queries", async () => {
    const { ns, expected } = await chat();
    const other: QueryPatchOp = { ...put, hash: "o", args: ["c2"], ast: channelMessages("c2", 10) };
    const pullOnce = (group: string, cookie: number | null, patch: QueryPatchOp[]) =>
      ns.pull({ cookie, clientGroupID: group, queries: { patch } });
    pullOnce("g1", null, [put]);
    // g2 holds one more query than g1: a reset copies the one g1 lends and evaluates the other.
    const both = pullOnce("g2", null, [put, other]);
    expect(both.queriesRecomputed).toBe(2);
    expect(both.queriesCopied).toBe(1);
    // g1's reset takes its one query from g2, which holds more.
    expect(pullOnce("g1", null, []).queriesCopied).toBe(1);
    // A query added on a later pull is copied too.
    const g3 = pullOnce("g3", null, [other]);
    const added = pullOnce("g3", g3.cookie, [put]);
    expect(added.queriesCopied).toBe(1);
    expect(added.reset).toBe(false);
    const client = new ClientRows();
    client.apply(g3.json as never, chatSchema);
    client.apply(added.json as never, chatSchema);
    expect(client.keys()).toEqual([...new Set([...expected(), ...expected(undefined, other.ast)])].sort());
  });

  it("copies from no group behind the watermark whose query a change since can affect", async () => {
    const { ns, pull, expected, keys } = await chat();
    pull("g1");
    ns.sql("INSERT INTO message VALUES ('m3', 'c1', 'u1', 3, 'c')");
    expect(pull("g2").queriesCopied).toBe(0);
    expect(keys("g2")).toContain('message/["m3"]');
    expect(keys("g2")).toEqual(expected());
    // g2 is at the watermark now, and lends.
    expect(pull("g3").queriesCopied).toBe(1);
    expect(keys("g3")).toEqual(expected());
  });

  it("copies from a group behind the watermark when no change since can affect the query", async () => {
    const { ns, pull, expected, keys } = await chat();
    pull("g1");
    // Another channel's message, and a user no held message names.
    ns.sql("INSERT INTO message VALUES ('m3', 'c2', 'u1', 3, 'c')");
    ns.sql("INSERT INTO user VALUES ('u3', 'Cy')");
    ns.sql("UPDATE message SET text = 'c2' WHERE id = 'm3'");
    const second = pull("g2");
    expect(second.queriesCopied).toBe(1);
    expect(keys("g2")).toEqual(expected());
    expect(keys("g2")).toEqual(keys("g1"));
    // A reset evaluating afresh copies from a group behind too.
    expect(pull("g1", { cookie: null }).queriesCopied).toBe(1);
    expect(keys("g1")).toEqual(expected());
  });

  it("copies from no group behind whose held rows a related row now joins", async () => {
    const { ns, pull, expected, keys } = await chat();
    // A message whose author is not a user yet: the query holds the message alone.
    ns.sql("INSERT INTO message VALUES ('m3', 'c1', 'u9', 3, 'c')");
    pull("g1");
    expect(keys("g1")).not.toContain('user/["u9"]');
    // The author arrives: it correlates with a message the lender holds.
    ns.sql("INSERT INTO user VALUES ('u9', 'Nine')");
    expect(pull("g2").queriesCopied).toBe(0);
    expect(keys("g2")).toContain('user/["u9"]');
    expect(keys("g2")).toEqual(expected());
  });

  it("copies a whole group from a twin behind, or a query at a time when a change affects one", async () => {
    const { ns, expected } = await chat();
    const other: QueryPatchOp = { ...put, hash: "o", args: ["c2"], ast: channelMessages("c2", 10) };
    const pullOnce = (group: string, patch: QueryPatchOp[]) =>
      ns.pull({ cookie: null, clientGroupID: group, queries: { patch } });
    const rowsOf = (result: ReturnType<typeof pullOnce>) => {
      const client = new ClientRows();
      client.apply(result.json as never, chatSchema);
      return client.keys();
    };
    const both = () => [...new Set([...expected(), ...expected(undefined, other.ast)])].sort();
    pullOnce("g1", [put, other]);
    ns.sql("INSERT INTO message VALUES ('m3', 'c3', 'u1', 3, 'c')");
    const whole = pullOnce("g2", [put, other]);
    expect(whole.queriesCopied).toBe(2);
    expect(rowsOf(whole)).toEqual(both());
    // A message in c2 affects `other`: g3 copies `put` from a group behind and evaluates `other`.
    ns.sql("INSERT INTO message VALUES ('m4', 'c2', 'u2', 4, 'd')");
    const split = pullOnce("g3", [put, other]);
    expect(split.queriesRecomputed).toBe(2);
    expect(split.queriesCopied).toBe(1);
    expect(rowsOf(split)).toEqual(both());
    expect(rowsOf(split)).toContain('message/["m4"]');
  });

  it("copies from no group whose cookie is below the floor", async () => {
    const { ns, pull, expected, keys } = await chat();
    pull("g1");
    ns.sql("INSERT INTO message VALUES ('m3', 'c2', 'u1', 3, 'c')");
    ns.sql("INSERT INTO message VALUES ('m4', 'c2', 'u1', 4, 'd')");
    // Retention drops the changes since g1's cookie: whether they affect its query is unknown.
    ns.db.transaction(() => ns.engine.prune(ns.db.adapter, 1));
    expect(pull("g2").queriesCopied).toBe(0);
    expect(keys("g2")).toEqual(expected());
  });

  it("copies only between groups pulling under the same visibility", async () => {
    const { ns, pull, expected, keys } = await chat();
    pull("ann", { visibility: authoredBy("u1") });
    const bo = pull("bo", { visibility: authoredBy("u2") });
    expect(bo.queriesCopied).toBe(0);
    expect(keys("bo")).toEqual(expected(authoredBy("u2")));
    expect(keys("bo")).not.toContain('message/["m1"]');
    expect(pull("all").queriesCopied).toBe(0);
    expect(keys("all")).toEqual(expected());
    expect(pull("ann2", { visibility: authoredBy("u1") }).queriesCopied).toBe(1);
    expect(keys("ann2")).toEqual(expected(authoredBy("u1")));
    // Nor a query at a time.
    const other: QueryPatchOp = { ...put, hash: "o", args: ["c2"], ast: channelMessages("c2", 10) };
    const two = ns.pull({
      cookie: null,
      clientGroupID: "cy",
      visibility: authoredBy("u3"),
      queries: { patch: [put, other] },
    });
    expect(two.queriesCopied).toBe(0);
    const client = new ClientRows();
    client.apply(two.json as never, chatSchema);
    expect(client.keys()).toEqual([]);
  });

  it("lends the rows of a group pulled under another visibility since its reset as that one's", async () => {
    const { ns, pull, expected, keys } = await chat();
    pull("g1", { visibility: authoredBy("u1") });
    ns.sql("INSERT INTO message VALUES ('m3', 'c1', 'u2', 3, 'c')");
    // Its claims changed: every query is evaluated again under u2, so its rows are u2's alone.
    const moved = pull("g1", { visibility: authoredBy("u2") });
    expect(moved.queriesRecomputed).toBe(1);
    expect(keys("g1")).toEqual(expected(authoredBy("u2")));
    expect(pull("ann", { visibility: authoredBy("u1") }).queriesCopied).toBe(0);
    expect(keys("ann")).toEqual(expected(authoredBy("u1")));
    const bo = pull("bo", { visibility: authoredBy("u2") });
    expect(bo.queriesCopied).toBe(1);
    expect(keys("bo")).toEqual(expected(authoredBy("u2")));
  });

  it("copies from no group last pulled without its queries' field until it resets", async () => {
    const { ns, pull, expected, keys } = await chat();
    const first = pull("g1");
    ns.sql("INSERT INTO message VALUES ('m3', 'c1', 'u1', 3, 'c')");
    // The group answers by its queries still, but the pull carried no visibility identity.
    const bare = ns.pull({ cookie: first.cookie, clientGroupID: "g1" });
    expect(bare.json.rowsPatch?.some((op) => op.value?.id === "m3")).toBe(true);
    expect(pull("g2").queriesCopied).toBe(0);
    expect(keys("g2")).toEqual(expected());
    expect(pull("g3").queriesCopied).toBe(1);
  });

  it("copies nothing while the log holds changes no version committed", async () => {
    const { ns, pull, expected } = await chat();
    pull("g1");
    const result = ns.db.transaction(() => {
      ns.db.adapter.exec("INSERT INTO message VALUES ('m3', 'c1', 'u1', 3, 'c')", []);
      const answer = ns.engine.pull(ns.db.adapter, {
        clientGroupID: "g2",
        userID: "u",
        cookie: null,
        queries: { patch: [put] },
      });
      return { answer, rows: expected() };
    });
    expect(result.answer.queriesCopied).toBe(0);
    const client = new ClientRows();
    client.apply(JSON.parse(result.answer.body), chatSchema);
    expect(client.keys()).toEqual(result.rows);
    expect(client.keys()).toContain('message/["m3"]');
  });

  it("copies from no group whose rows a schema migration left behind", async () => {
    const { ns, pull, expected, keys } = await chat();
    pull("g1");
    const { message } = chatSchema.tables;
    const pinned = { type: "boolean", nullable: true } as const;
    const migrated = {
      tables: { ...chatSchema.tables, message: { ...message, columns: { ...message.columns, pinned } } },
    };
    ns.db.transaction(() => ns.engine.install(ns.db.adapter, migrated));
    // The migration committed a version of its own: no group is at the watermark.
    expect(pull("g2").queriesCopied).toBe(0);
    expect(keys("g2")).toEqual(expected());
    // g1 resets (the migration raised the floor) and lends again.
    expect(pull("g1").reset).toBe(true);
    expect(pull("g3").queriesCopied).toBe(1);
  });

  it("adds the column an earlier engine lacked; its groups lend once they reset", async () => {
    const { ns, pull, expected, keys } = await chat();
    pull("g1");
    ns.db.adapter.exec("ALTER TABLE _weir_query_groups DROP COLUMN visibility", []);
    expect(ns.db.transaction(() => ns.engine.install(ns.db.adapter, chatSchema))).toEqual({
      outcome: "unchanged",
    });
    expect(pull("g2").queriesCopied).toBe(0);
    expect(keys("g2")).toEqual(expected());
    pull("g1", { cookie: null });
    expect(pull("g3").queriesCopied).toBe(1);
  });

  it("lets no group answered under another visibility follow a leader", async () => {
    const { ns, pull, expected, keys } = await chat();
    pull("leader", { visibility: authoredBy("u1") });
    pull("follower", { visibility: authoredBy("u2") });
    ns.sql("INSERT INTO message VALUES ('m3', 'c1', 'u2', 3, 'c')");
    const led = pull("leader", { visibility: authoredBy("u1"), followers: ["follower"] });
    expect(led.followed ?? []).toEqual([]);
    // The follower's own pull (under its new claims, u1's) recomputes its rows.
    pull("follower", { visibility: authoredBy("u1") });
    expect(keys("follower")).toEqual(expected(authoredBy("u1")));
    expect(pull("bo", { visibility: authoredBy("u2") }).queriesCopied).toBe(0);
    expect(keys("bo")).toEqual(expected(authoredBy("u2")));
    expect(pull("ann", { visibility: authoredBy("u1") }).queriesCopied).toBe(1);
    expect(keys("ann")).toEqual(expected(authoredBy("u1")));
  });
});
