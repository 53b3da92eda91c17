import { describe, expect, it } from "vitest";
import { channelMessages, chatSchema } from "../test/chat.js";
import { DATABASES, freshEngine, testEngine } from "../test/databases.js";
import { Namespace } from "../test/fixtures.js";
import type { QueryPatchOp } from "./types.js";

const put = (hash: string, ast: unknown): QueryPatchOp => ({ op: "put", hash, name: "q", args: [hash], ast });

/** The engine's tables that only query-aware pulls use. */
const QUERY_TABLES = [
  "_weir_group_keys",
  "_weir_group_rows",
  "_weir_queries",
  "_weir_query_bounds",
  "_weir_query_groups",
  "_weir_query_journal",
  "_weir_query_moves",
  "_weir_query_partial",
  "_weir_query_pending",
  "_weir_query_ranges",
  "_weir_query_rows",
  "_weir_query_scratch",
  "_weir_query_sent",
  "_weir_quiet_versions",
];

function queryTablesOf(ns: Namespace): string[] {
  return ns.db.adapter
    .query(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND (name LIKE '\\_weir\\_quer%' ESCAPE '\\' " +
        "OR name LIKE '\\_weir\\_group\\_%' ESCAPE '\\' OR name = '_weir_quiet_versions') ORDER BY name",
      [],
    )
    .map(([name]) => String(name));
}

describe.each(DATABASES)("the query tables on $kind", ({ open }) => {
  async function chat() {
    const ns = new Namespace(await testEngine(), open(), chatSchema);
    ns.sql("INSERT INTO channel VALUES ('c1', 'one')");
    ns.sql("INSERT INTO user VALUES ('u1', 'Ann')");
    ns.sql("INSERT INTO message VALUES ('m1', 'c1', 'u1', 1, 'a'), ('m2', 'c1', 'u1', 2, 'b')");
    return ns;
  }

  it("are not created for a namespace whose clients pull without queries, which pulls and prunes without them", async () => {
    const ns = await chat();
    const first = ns.pull({ cookie: null });
    expect(first.json.rowsPatch).toHaveLength(5);
    ns.sql("INSERT INTO message VALUES ('m3', 'c1', 'u1', 3, 'c')");
    const next = ns.pull({ cookie: first.cookie });
    expect(next.json.rowsPatch).toEqual([expect.objectContaining({ op: "put", tableName: "message" })]);
    expect(
      ns.engine.pullIfCaughtUp(ns.db.adapter, { cookie: next.cookie, clientGroupID: "g", userID: "u" }),
    ).toMatchObject({ unchanged: true });
    expect(ns.db.transaction(() => ns.engine.prune(ns.db.adapter, 1))).toMatchObject({
      floor: next.cookie - 1,
    });
    expect(ns.engine.groupQueries(ns.db.adapter, "g")).toEqual({ version: null, queries: [] });
    // Installed again (a restart), the namespace still has none.
    expect(ns.db.transaction(() => ns.engine.install(ns.db.adapter, chatSchema))).toEqual({
      outcome: "unchanged",
    });
    expect(queryTablesOf(ns)).toEqual([]);
  });

  it("are created by the first pull that supplies queries, and serve its group from then on", async () => {
    const ns = await chat();
    ns.pull({ cookie: null, clientGroupID: "plain" });
    expect(queryTablesOf(ns)).toEqual([]);
    const first = ns.pull({ cookie: null, queries: { patch: [put("h1", channelMessages("c1", 5))] } });
    expect(first.json.gotQueries).toEqual(["h1"]);
    expect(queryTablesOf(ns)).toEqual(QUERY_TABLES);
    ns.sql("INSERT INTO message VALUES ('m3', 'c1', 'u1', 3, 'c')");
    // Another engine (a restart) finds them at install, and the group goes on from its cookie.
    const engine = await freshEngine();
    expect(ns.db.transaction(() => engine.install(ns.db.adapter, chatSchema))).toEqual({
      outcome: "unchanged",
    });
    const next = ns.db.transaction(() =>
      engine.pull(ns.db.adapter, {
        clientGroupID: "g",
        userID: "u",
        cookie: first.cookie,
        queries: { patch: [] },
      }),
    );
    expect(next.reset).toBe(false);
    expect(JSON.parse(next.body).rowsPatch).toEqual([
      expect.objectContaining({
        op: "put",
        tableName: "message",
        value: expect.objectContaining({ id: "m3" }),
      }),
    ]);
    expect(ns.engine.groupQueries(ns.db.adapter, "g").queries).toEqual([
      { hash: "h1", name: "q", args: ["h1"] },
    ]);
  });

  it("are found missing again when the pull that created them is rolled back", async () => {
    const ns = await chat();
    ns.pull({ cookie: null, clientGroupID: "plain" });
    expect(() =>
      ns.db.transaction(() => {
        ns.engine.pull(ns.db.adapter, {
          clientGroupID: "g",
          userID: "u",
          cookie: null,
          queries: { patch: [put("h1", channelMessages("c1", 5))] },
        });
        throw new Error("the host's transaction fails after the pull");
      }),
    ).toThrow("fails after the pull");
    expect(queryTablesOf(ns)).toEqual([]);
    expect(ns.pull({ cookie: null, clientGroupID: "plain" }).json.rowsPatch).toHaveLength(5);
    expect(
      ns.pull({ cookie: null, queries: { patch: [put("h1", channelMessages("c1", 5))] } }).json.gotQueries,
    ).toEqual(["h1"]);
  });
});
