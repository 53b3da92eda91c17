import { describe, expect, it } from "vitest";
import {
  ClientRows,
  channelMessages,
  channelsWrittenBy,
  chatSchema,
  messagesInChannelsNamed,
  usersNamedLike,
} from "../test/chat.js";
import { DATABASES, testEngine } from "../test/databases.js";
import { Namespace } from "../test/fixtures.js";
import type { QueryPatchOp } from "./types.js";

const put = (hash: string, ast: unknown): QueryPatchOp => ({ op: "put", hash, name: "q", args: [hash], ast });

describe.each(DATABASES)("query-aware pull on $kind", ({ open }) => {
  async function chat() {
    const ns = new Namespace(await testEngine(), open(), chatSchema);
    ns.sql("INSERT INTO channel VALUES ('c1', 'one'), ('c2', 'two')");
    ns.sql("INSERT INTO user VALUES ('u1', 'Ann'), ('u2', 'Bo')");
    ns.sql(
      "INSERT INTO message VALUES ('m1', 'c1', 'u1', 1, 'a'), ('m2', 'c1', 'u2', 2, 'b'), ('m3', 'c1', 'u1', 3, 'c'), ('m4', 'c2', 'u2', 4, 'd')",
    );
    const client = new ClientRows();
    const pull = (patch: QueryPatchOp[] = [], clientGroupID = "g") => {
      const result = ns.pull({ cookie: client.cookie, clientGroupID, queries: { patch } });
      if (!result.json.unchanged) client.apply(result.json as never, chatSchema);
      return result;
    };
    return { ns, client, pull };
  }

  it("sends the rows the group's queries hold, and names the queries complete", async () => {
    const { client, pull } = await chat();
    const first = pull([put("h1", channelMessages("c1", 2))]);
    expect(first.reset).toBe(true);
    expect((first.json as { gotQueries?: string[] }).gotQueries).toEqual(["h1"]);
    expect(client.keys()).toEqual(['message/["m2"]', 'message/["m3"]', 'user/["u1"]', 'user/["u2"]']);
    expect(first.queriesRecomputed).toBe(1);
  });

  it("answers a group's stored queries as a list, empty for a group that has none", async () => {
    const { ns, pull } = await chat();
    expect(ns.engine.groupQueries(ns.db.adapter, "g")).toEqual({ version: null, queries: [] });
    pull([put("h1", channelMessages("c1", 2))]);
    expect(ns.engine.groupQueries(ns.db.adapter, "g").queries).toEqual([
      { hash: "h1", name: "q", args: ["h1"] },
    ]);
  });

  it("keeps a limit window exact as rows enter and leave it", async () => {
    const { ns, client, pull } = await chat();
    pull([put("h1", channelMessages("c1", 2))]);
    ns.sql("INSERT INTO message VALUES ('m5', 'c1', 'u2', 5, 'e')");
    const after = pull();
    expect(after.json.rowsPatch).toEqual([
      { op: "del", tableName: "message", id: { id: "m2" } },
      {
        op: "put",
        tableName: "message",
        value: { id: "m5", channelId: "c1", authorId: "u2", at: 5, text: "e" },
      },
    ]);
    ns.sql("DELETE FROM message WHERE id = 'm5'");
    pull();
    expect(client.keys()).toEqual(['message/["m2"]', 'message/["m3"]', 'user/["u1"]', 'user/["u2"]']);
    ns.sql("UPDATE user SET name = 'Ann B' WHERE id = 'u1'");
    const renamed = pull();
    expect(renamed.json.rowsPatch).toEqual([
      { op: "put", tableName: "user", value: { id: "u1", name: "Ann B" } },
    ]);
  });

  it("never drops a row another active query still holds", async () => {
    const { client, pull } = await chat();
    pull([put("a", channelMessages("c1", 3)), put("b", channelMessages("c2", 3))]);
    expect(client.keys()).toContain('user/["u2"]');
    const dropA = pull([{ op: "del", hash: "a" }]);
    // u2 wrote in both channels: still held by b.
    expect(client.keys()).toEqual(['message/["m4"]', 'user/["u2"]']);
    expect((dropA.json as { gotQueries?: string[] }).gotQueries).toEqual(["b"]);
    pull([{ op: "clear" }]);
    expect(client.keys()).toEqual([]);
  });

  it("does not touch idle queries, and answers a caught-up group unchanged", async () => {
    const { ns, pull } = await chat();
    pull([put("a", channelMessages("c1", 3)), put("u", { table: "user" })]);
    ns.sql("INSERT INTO channel VALUES ('c3', 'three')");
    const after = pull();
    expect(after.queriesRecomputed).toBe(0);
    expect(after.json.rowsPatch).toEqual([]);
    expect(pull().json).toEqual({ cookie: after.cookie, unchanged: true });
  });

  it("re-evaluates only the queries a changed row can enter or leave", async () => {
    const { ns, client, pull } = await chat();
    pull([put("one", channelMessages("c1", 2)), put("two", channelMessages("c2", 2))]);
    // Another channel's message, an author no held message names: nothing to do.
    ns.sql("INSERT INTO channel VALUES ('c3', 'three')");
    ns.sql("INSERT INTO message VALUES ('m6', 'c3', 'u1', 6, 'f')");
    ns.sql("INSERT INTO user VALUES ('u3', 'Cy')");
    let after = pull();
    expect(after.queriesRecomputed).toBe(0);
    expect(after.json.rowsPatch).toEqual([]);
    // A message moves into c1's window (its current values pass c1's condition).
    ns.sql("UPDATE message SET channelId = 'c1', authorId = 'u3' WHERE id = 'm6'");
    after = pull();
    expect(after.queriesRecomputed).toBe(1);
    expect(client.keys()).toEqual([
      'message/["m3"]',
      'message/["m4"]',
      'message/["m6"]',
      'user/["u1"]',
      'user/["u2"]',
      'user/["u3"]',
    ]);
    // It moves out again (only its prior values pass), and m2 comes back into the window.
    ns.sql("UPDATE message SET channelId = 'c3' WHERE id = 'm6'");
    after = pull();
    expect(after.queriesRecomputed).toBe(1);
    expect(client.keys()).toEqual([
      'message/["m2"]',
      'message/["m3"]',
      'message/["m4"]',
      'user/["u1"]',
      'user/["u2"]',
    ]);
    // A user a held message names, added after the message: the related subquery holds it.
    ns.sql("INSERT INTO message VALUES ('m7', 'c2', 'u9', 7, 'g')");
    pull();
    ns.sql("INSERT INTO user VALUES ('u9', 'Di')");
    after = pull();
    expect(after.queriesRecomputed).toBe(1);
    expect(client.rows.get('user/["u9"]')).toEqual({ id: "u9", name: "Di" });
    // A user no held message names (u3 wrote only m6, now in c3) is renamed: nothing to do.
    ns.sql("UPDATE user SET name = 'Cyd' WHERE id = 'u3'");
    expect(pull().queriesRecomputed).toBe(0);
    // A held author renamed: the query holding them is re-evaluated and the row put.
    ns.sql("UPDATE user SET name = 'Dee' WHERE id = 'u9'");
    after = pull();
    expect(after.queriesRecomputed).toBe(1);
    expect(after.json.rowsPatch).toEqual([
      { op: "put", tableName: "user", value: { id: "u9", name: "Dee" } },
    ]);
  });

  it("re-evaluates a query when a table its EXISTS condition reads changes", async () => {
    const { ns, client, pull } = await chat();
    const inChannel = messagesInChannelsNamed("two");
    pull([put("e", inChannel)]);
    // The channel that makes m4 pass is held too (a client evaluating the query finds it).
    expect(client.keys()).toEqual(['channel/["c2"]', 'message/["m4"]']);
    ns.sql("UPDATE channel SET name = 'two' WHERE id = 'c1'");
    const after = pull();
    expect(after.queriesRecomputed).toBe(1);
    expect(client.keys()).toEqual([
      'channel/["c1"]',
      'channel/["c2"]',
      'message/["m1"]',
      'message/["m2"]',
      'message/["m3"]',
      'message/["m4"]',
    ]);
  });

  it("re-evaluates a query whose EXISTS names its rows by key only when a changed row correlates", async () => {
    const { ns, client, pull } = await chat();
    const byAnn = channelsWrittenBy("u1");
    pull([put("ann", byAnn)]);
    expect(client.keys()).toEqual(['channel/["c1"]', 'message/["m1"]', 'message/["m3"]']);
    // Bo writes in c2, and a message names a channel that does not exist: nothing to do.
    ns.sql("INSERT INTO message VALUES ('m5', 'c2', 'u2', 5, 'e'), ('m6', 'c9', 'u1', 6, 'f')");
    expect(pull().queriesRecomputed).toBe(0);
    // Ann's message moves into c2 (its current values), then m2 becomes Ann's own.
    ns.sql("UPDATE message SET channelId = 'c2' WHERE id = 'm6'");
    let after = pull();
    expect(after.queriesRecomputed).toBe(1);
    expect(client.keys()).toEqual([
      'channel/["c1"]',
      'channel/["c2"]',
      'message/["m1"]',
      'message/["m3"]',
      'message/["m6"]',
    ]);
    // Ann's messages leave c1 (only their prior values correlate): c1 goes.
    ns.sql("UPDATE message SET channelId = 'c9' WHERE id IN ('m1', 'm3')");
    after = pull();
    expect(after.queriesRecomputed).toBe(1);
    expect(client.keys()).toEqual(['channel/["c2"]', 'message/["m6"]']);
  });

  it("catches up a client behind the membership's cookie with what moved since its own, and refuses one from the future", async () => {
    const { ns, client, pull } = await chat();
    pull([put("a", channelMessages("c1", 1))]);
    const stale = client.cookie!;
    const held = new Map(client.rows);
    // Two answers the client misses: m8 enters the window, then m9 pushes it out (unchanged).
    ns.sql("INSERT INTO message VALUES ('m8', 'c1', 'u1', 8, 'y')");
    pull();
    ns.sql("INSERT INTO message VALUES ('m9', 'c1', 'u2', 9, 'z')");
    pull();
    client.cookie = stale;
    client.rows = held;
    const again = pull();
    expect(again.reset).toBe(false);
    expect(client.keys()).toEqual(['message/["m9"]', 'user/["u2"]']);
    // Only what moved: m3 and u1 left, m8 entered and left, m9 and u2 entered.
    expect(again.json.rowsPatch).toHaveLength(5);
    expect(() => ns.pull({ cookie: 999, clientGroupID: "g", queries: { patch: [] } })).toThrow(/ahead/);
  });

  it("resets a client behind the membership's cookie whose changes were pruned", async () => {
    const { ns, client, pull } = await chat();
    pull([put("a", channelMessages("c1", 1))]);
    const stale = client.cookie!;
    ns.sql("INSERT INTO message VALUES ('m9', 'c1', 'u2', 9, 'z')");
    pull();
    ns.sql("INSERT INTO channel VALUES ('c3', 'three')");
    ns.db.transaction(() => ns.engine.prune(ns.db.adapter, 1));
    client.cookie = stale;
    client.rows.set('message/["gone"]', {});
    const again = pull();
    expect(again.reset).toBe(true);
    expect(client.keys()).toEqual(['message/["m9"]', 'user/["u2"]']);
  });

  it("refuses a pull whose evaluations pass the rows budget, changing nothing", async () => {
    const { ns, pull } = await chat();
    pull([put("a", channelMessages("c1", 1))]);
    const big = { clientGroupID: "g", cookie: null, maxQueryRows: 4 };
    expect(() => ns.pull({ ...big, queries: { patch: [put("b", { table: "message" })] } })).toThrow(
      expect.objectContaining({ code: "query_budget_exceeded" }),
    );
    expect(ns.db.adapter.query("SELECT hash FROM _weir_queries", [])).toEqual([["a"]]);
    expect(ns.pull({ ...big, queries: { patch: [] } }).json).toMatchObject({ gotQueries: ["a"] });
  });

  it("refuses an AST the schema cannot answer, storing nothing", async () => {
    const { ns, pull } = await chat();
    expect(() => pull([put("x", { table: "nope" })])).toThrow(/query q: table: the table "nope"/);
    const first = pull([]);
    expect((first.json as { gotQueries?: string[] }).gotQueries).toEqual([]);
    expect(ns.db.adapter.query("SELECT count(*) FROM _weir_queries", [])).toEqual([[0]]);
  });

  it("brings a query without a limit up to date among the changed rows, counting rows other queries hold", async () => {
    const ns = new Namespace(await testEngine(), open(), chatSchema);
    ns.sql("INSERT INTO channel VALUES ('c1', 'one')");
    ns.sql("INSERT INTO user VALUES ('u1', 'Ann'), ('u2', 'Bo'), ('u3', 'Cy')");
    ns.sql("INSERT INTO message VALUES ('m1', 'c1', 'u1', 1, 'a'), ('m2', 'c1', 'u2', 2, 'b')");
    // Users named A..., not u9 (whom this caller may not see).
    const visibility = { user: { sql: "id <> ?", params: ["u9"] } };
    const named = usersNamedLike("A%");
    const queries = [put("named", named), put("window", channelMessages("c1", 1))];
    const client = new ClientRows();
    const pull = (patch: QueryPatchOp[] = []) => {
      const result = ns.pull({ cookie: client.cookie, visibility, queries: { patch } });
      if (!result.json.unchanged) client.apply(result.json as never, chatSchema);
      return result;
    };
    // A group that subscribes now: the rows `client` must hold.
    let fresh = 0;
    const expected = () => {
      const other = new ClientRows();
      other.apply(
        ns.pull({ cookie: null, clientGroupID: `fresh${++fresh}`, visibility, queries: { patch: queries } })
          .json as never,
        chatSchema,
      );
      return other.rows;
    };
    pull(queries);
    // The window holds m2 and its author u2; "named" holds u1.
    expect(client.keys()).toEqual(['message/["m2"]', 'user/["u1"]', 'user/["u2"]']);
    ns.sql("INSERT INTO user VALUES ('u4', 'Al'), ('u9', 'Ax')");
    expect(pull().queriesRecomputed).toBe(1);
    expect(client.rows).toEqual(expected());
    expect(client.keys()).toEqual(['message/["m2"]', 'user/["u1"]', 'user/["u2"]', 'user/["u4"]']);
    // u2 enters "named" (the window holds it too: one row, two holders), u1 leaves it.
    ns.sql("UPDATE user SET name = 'Abe' WHERE id = 'u2'");
    ns.sql("UPDATE user SET name = 'Zed' WHERE id = 'u1'");
    pull();
    expect(client.rows).toEqual(expected());
    expect(client.keys()).toEqual(['message/["m2"]', 'user/["u2"]', 'user/["u4"]']);
    // The window moves off m2: u2 stays, held by "named" alone; then it leaves "named" too.
    ns.sql("INSERT INTO message VALUES ('m3', 'c1', 'u3', 3, 'c')");
    pull();
    expect(client.keys()).toEqual(['message/["m3"]', 'user/["u2"]', 'user/["u3"]', 'user/["u4"]']);
    ns.sql("UPDATE user SET name = 'Bo' WHERE id = 'u2'");
    ns.sql("DELETE FROM user WHERE id = 'u4'");
    ns.sql("UPDATE user SET name = 'Ace' WHERE id = 'u3'");
    const moved = pull();
    // u2 and u4 deleted, u3 put with its new name: the answer counts each kind.
    expect([moved.puts, moved.dels]).toEqual([1, 2]);
    expect(client.rows).toEqual(expected());
    expect(client.keys()).toEqual(['message/["m3"]', 'user/["u3"]']);
    // A change that passes the condition neither before nor after re-evaluates nothing.
    ns.sql("UPDATE user SET name = 'Bob' WHERE id = 'u2'");
    expect(pull().queriesRecomputed).toBe(0);
    // u3 leaves "named" but the window still holds it, with its new value.
    ns.sql("UPDATE user SET name = 'Cy' WHERE id = 'u3'");
    pull();
    expect(client.rows).toEqual(expected());
    expect(client.rows.get('user/["u3"]')).toEqual({ id: "u3", name: "Cy" });
  });
});
