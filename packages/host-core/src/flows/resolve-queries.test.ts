import { describe, expect, it } from "vitest";
import { headerUser, send, testHost } from "../../test/test-host.js";
import { corpus, corpusSchema, corpusVisibility } from "../../test/zero-corpus.js";
import type { WeirConfig } from "../config/weir-config.js";

// Each pull's queries are evaluated in it: an answer paced by its time (`queryAnswerMs`) would
// leave a query after the first for the next pull on a loaded machine, which these cases do not test.
const chat: WeirConfig = {
  queryAnswerMs: 60_000,
  schema: {
    tables: {
      message: { columns: { id: "string", channelId: "string", at: "integer" }, primaryKey: ["id"] },
    },
  },
  mutators: {
    sql(tx, args: { statements: string[] }) {
      for (const sql of args.statements) tx.exec(sql);
    },
  },
  authenticate: headerUser,
  queries: {
    channel: (args) => {
      const { channelId } = args as { channelId: string };
      if (typeof channelId !== "string") throw new Error("channelId must be a string");
      return {
        table: "message",
        where: {
          type: "simple",
          op: "=",
          left: { type: "column", name: "channelId" },
          right: { type: "literal", value: channelId },
        },
        orderBy: [["at", "desc"]],
        limit: 2,
      };
    },
    mine: (_args, claims) => ({
      table: "message",
      where: {
        type: "simple",
        op: "=",
        left: { type: "column", name: "id" },
        right: { type: "literal", value: claims.userID },
      },
    }),
  },
};

let mutationID = 0;
const seed = (host: Awaited<ReturnType<typeof testHost>>, statements: string[]) =>
  send(host, "POST", "/ns/push", {
    user: "writer",
    body: {
      clientGroupID: "w",
      pushVersion: 1,
      mutations: [{ type: "custom", id: ++mutationID, clientID: "wc", name: "sql", args: [{ statements }] }],
    },
  });

const pull = (
  host: Awaited<ReturnType<typeof testHost>>,
  cookie: number | null,
  patch: unknown[],
  user = "alice",
) =>
  send(host, "POST", "/ns/pull", {
    user,
    body: { clientGroupID: `g-${user}`, clientID: "c", cookie, queries: { patch } },
  });

describe("query-aware pull over HTTP", () => {
  it("resolves names with the caller's claims and syncs what the queries hold", async () => {
    mutationID = 0;
    const host = await testHost(chat);
    await seed(host, [
      "INSERT INTO message VALUES ('m1', 'c1', 1), ('m2', 'c1', 2), ('m3', 'c1', 3), ('alice', 'c9', 0)",
    ]);
    const first = await pull(host, null, [
      { op: "put", hash: "h1", name: "channel", args: { channelId: "c1" } },
      { op: "put", hash: "h2", name: "mine" },
    ]);
    expect(first.status).toBe(200);
    expect(first.json.gotQueries).toEqual(["h1", "h2"]);
    const ids = (rows: { op: string; value?: { id: string } }[]) =>
      rows
        .filter((r) => r.op === "put")
        .map((r) => r.value!.id)
        .sort();
    expect(ids(first.json.rowsPatch)).toEqual(["alice", "m2", "m3"]);
    await seed(host, ["INSERT INTO message VALUES ('m4', 'c1', 4)"]);
    const next = await pull(host, first.json.cookie, [{ op: "del", hash: "h2" }]);
    expect(next.json.rowsPatch).toEqual([
      { op: "del", tableName: "message", id: { id: "alice" } },
      { op: "del", tableName: "message", id: { id: "m2" } },
      { op: "put", tableName: "message", value: { id: "m4", channelId: "c1", at: 4 } },
    ]);
    expect(next.json.gotQueries).toEqual(["h1"]);
    // A plain pull of the group goes on answering by its queries.
    const plain = await send(host, "POST", "/ns/pull", {
      user: "alice",
      body: { clientGroupID: "g-alice", clientID: "c", cookie: next.json.cookie },
    });
    expect(plain.json).toEqual({ cookie: next.json.cookie, unchanged: true });
  });

  it("refuses an unknown name, a raw AST and args the query refuses, changing nothing", async () => {
    const host = await testHost(chat);
    const unknown = await pull(host, null, [{ op: "put", hash: "h", name: "nope" }]);
    expect(unknown).toMatchObject({
      status: 400,
      json: { error: "bad_request", message: "unknown query nope" },
    });
    const raw = await pull(host, null, [
      { op: "put", hash: "h", name: "channel", ast: { table: "message" } },
    ]);
    expect(raw).toMatchObject({
      status: 400,
      json: { message: expect.stringContaining("raw query ASTs are refused") },
    });
    const args = await pull(host, null, [{ op: "put", hash: "h", name: "channel", args: { channelId: 5 } }]);
    expect(args).toMatchObject({
      status: 400,
      json: { message: "query channel: channelId must be a string" },
    });
    const after = await pull(host, null, []);
    expect(after.json.gotQueries).toEqual([]);
  });

  it("answers 422 when a pull's query evaluations pass the server's budget", async () => {
    mutationID = 0;
    const host = await testHost({ ...chat, maxQueryRows: 1 });
    await seed(host, ["INSERT INTO message VALUES ('m1', 'c1', 1), ('m2', 'c1', 2)"]);
    const answer = await pull(host, null, [
      { op: "put", hash: "h", name: "channel", args: { channelId: "c1" } },
    ]);
    expect(answer).toMatchObject({ status: 422, json: { error: "query_budget_exceeded" } });
    expect((await pull(host, null, [])).json.gotQueries).toEqual([]);
  });

  it("re-resolves a group's queries when the query transform version changes", async () => {
    mutationID = 0;
    let version = 1;
    const host = await testHost({
      ...chat,
      queryTransformVersion: () => version,
      queries: {
        ...chat.queries,
        // What the query answers depends on the version: its window widens.
        recent: () => ({ table: "message", orderBy: [["at", "desc"]], limit: version + 1 }),
      },
    });
    await seed(host, ["INSERT INTO message VALUES ('m1', 'c1', 1), ('m2', 'c1', 2), ('m3', 'c1', 3)"]);
    const first = await pull(host, null, [{ op: "put", hash: "r", name: "recent" }]);
    expect(first.json.rowsPatch.map((op: { value: { id: string } }) => op.value?.id)).toEqual([
      undefined,
      "m2",
      "m3",
    ]);
    const same = await pull(host, first.json.cookie, []);
    expect(same.json).toEqual({ cookie: first.json.cookie, unchanged: true });
    version = 2;
    const widened = await pull(host, first.json.cookie, []);
    expect(widened.json.rowsPatch).toEqual([
      { op: "put", tableName: "message", value: { id: "m1", channelId: "c1", at: 1 } },
    ]);
    expect(widened.json.gotQueries).toEqual(["r"]);
  });

  it("reports an unknown name and ignores it when the config tolerates it", async () => {
    const host = await testHost({ ...chat, tolerateUnknownQueries: true });
    const answer = await pull(host, null, [
      { op: "put", hash: "h", name: "nope" },
      { op: "put", hash: "k", name: "mine" },
    ]);
    expect(answer.status).toBe(200);
    expect(answer.json.unknownQueries).toEqual(["h"]);
    expect(answer.json.gotQueries).toEqual(["k"]);
  });

  it("answers every case of the Zero corpus with exactly the expected ids", async () => {
    const names = new Map(corpus.cases.map((testCase, i) => [`case${i}`, testCase]));
    const host = await testHost({
      schema: corpusSchema(),
      mutators: chat.mutators,
      authenticate: headerUser,
      visibility: (claims) => corpusVisibility(claims.userID),
      queries: Object.fromEntries([...names].map(([name, testCase]) => [name, () => testCase.ast])),
    });
    for (const ns of Object.keys(corpus.seed)) {
      await send(host, "POST", `/${ns}/push`, {
        user: "seeder",
        body: {
          clientGroupID: "seed",
          pushVersion: 1,
          mutations: [
            { type: "custom", id: 1, clientID: "s", name: "sql", args: [{ statements: corpus.seed[ns] }] },
          ],
        },
      });
    }
    for (const [name, testCase] of names) {
      const table = corpusSchema().tables[testCase.rootTable]!;
      const answer = await send(host, "POST", `/${testCase.ns}/pull`, {
        user: testCase.user,
        body: {
          clientGroupID: `${name}-${testCase.user}`,
          clientID: "c",
          cookie: null,
          queries: { patch: [{ op: "put", hash: name, name, args: testCase.args }] },
        },
      });
      expect(answer.status).toBe(200);
      const rows = (
        answer.json.rowsPatch as { op: string; tableName: string; value: Record<string, unknown> }[]
      )
        .filter((op) => op.op === "put" && op.tableName === testCase.rootTable)
        .map((op) => table.primaryKey.map((column) => op.value[column]).join("/"));
      expect({ name, ids: rows.sort() }).toEqual({ name, ids: [...testCase.expect].sort() });
    }
  });
});
