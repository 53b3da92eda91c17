import { describe, expect, it } from "vitest";
import { ClientRows, channelMessages, chatSchema } from "../test/chat.js";
import { DATABASES, testEngine } from "../test/databases.js";
import { Namespace } from "../test/fixtures.js";
import type { QueryPatchOp } from "./types.js";

const put = (hash: string, ast: unknown): QueryPatchOp => ({ op: "put", hash, name: "q", args: [hash], ast });

const C1_ROWS = ['message/["m1"]', 'message/["m2"]', 'message/["m3"]', 'user/["u1"]', 'user/["u2"]'];

// Query-aware answers under the pull caps: cut between rows, each cut answer a new cookie.
describe.each(DATABASES)("query-aware pull under caps on $kind", ({ open }) => {
  async function chat(caps: { maxChangeRows?: number; maxChangeBytes?: number }) {
    const ns = new Namespace(await testEngine(), open(), chatSchema);
    ns.sql("INSERT INTO user VALUES ('u1', 'Ann'), ('u2', 'Bo')");
    ns.sql(
      "INSERT INTO message VALUES ('m1', 'c1', 'u1', 1, 'a'), ('m2', 'c1', 'u2', 2, 'b'), ('m3', 'c1', 'u1', 3, 'c'), ('m4', 'c2', 'u2', 4, 'd')",
    );
    const client = new ClientRows();
    const pull = (patch: QueryPatchOp[] = [], cookie = client.cookie) => {
      const result = ns.pull({ cookie, clientGroupID: "g", queries: { patch }, ...caps });
      if (!result.json.unchanged) client.apply(result.json as never, chatSchema);
      return result;
    };
    return { ns, client, pull };
  }

  it("sends a row an answer under a one-row cap, each answer at a new cookie, naming the query once complete", async () => {
    const { ns, client, pull } = await chat({ maxChangeRows: 1 });
    const watermark = ns.engine.state(ns.db.adapter).watermark;
    const answers = [pull([put("h", channelMessages("c1", 3))])];
    while (answers.at(-1)!.more) answers.push(pull());
    expect(answers.map((a) => a.json.rowsPatch!.filter((op) => op.op !== "clear").length)).toEqual([
      1, 1, 1, 1, 1,
    ]);
    expect(answers[0]!.json.rowsPatch![0]).toEqual({ op: "clear" });
    expect(answers.map((a) => a.json.gotQueries)).toEqual([[], [], [], [], ["h"]]);
    const cookies = answers.map((a) => a.cookie);
    expect(cookies[0]).toBeGreaterThan(watermark);
    for (let i = 1; i < cookies.length; i++) expect(cookies[i]).toBeGreaterThan(cookies[i - 1]!);
    // The host learns the new watermark from the answer.
    expect(answers.map((a) => a.watermark)).toEqual(cookies);
    expect(client.keys()).toEqual(C1_ROWS);
    expect(pull().json).toEqual({ cookie: cookies.at(-1), unchanged: true });
  });

  it("names as complete, in each cut answer, the queries none of whose rows is owed, however many rows are", async () => {
    const { ns, client, pull } = await chat({ maxChangeRows: 40 });
    for (let i = 0; i < 150; i++) {
      ns.sql("INSERT INTO message VALUES (?, ?, ?, ?, 't')", [
        `x${i}`,
        i < 100 ? "c3" : "c4",
        i % 2 ? "u1" : "u2",
        i,
      ]);
    }
    const queries = {
      a: channelMessages("c3", 100),
      b: channelMessages("c4", 50),
      c: channelMessages("c1", 3),
    };
    const complete = () =>
      Object.entries(queries)
        .filter(([, ast]) =>
          ns.engine
            .queryRows(ns.db.adapter, ast)
            .every((row) => client.keys().includes(`${row.table}/${JSON.stringify(row.key)}`)),
        )
        .map(([hash]) => hash);
    // Each answer (which the client has applied) names what the client holds whole.
    const got: unknown[] = [];
    let answer = pull(Object.entries(queries).map(([hash, ast]) => put(hash, ast)));
    for (;;) {
      expect(answer.json.gotQueries).toEqual(complete());
      got.push(answer.json.gotQueries);
      if (!answer.more) break;
      answer = pull();
    }
    expect(got.length).toBeGreaterThan(3);
    expect(got.at(-1)).toEqual(["a", "b", "c"]);
  });

  it("names no complete query when told not to (a step before a sliced pull's last), its rows and cookies alike", async () => {
    // `e` matches nothing: complete in every answer, cut or not.
    const queries = [
      put("h", channelMessages("c1", 3)),
      put("k", channelMessages("c2", 3)),
      put("e", channelMessages("c9", 3)),
    ];
    for (const maxChangeRows of [1_000, 2]) {
      const named = await chat({ maxChangeRows });
      const unnamed = await chat({ maxChangeRows });
      const told = unnamed.ns.pull({
        cookie: null,
        clientGroupID: "g",
        queries: { patch: queries },
        maxChangeRows,
        nameCompleteQueries: false,
      });
      const answer = named.pull(queries);
      expect(answer.json.gotQueries).toContain("e");
      expect(told.json.gotQueries).toEqual([]);
      expect(told.json.rowsPatch).toEqual(answer.json.rowsPatch);
      expect(told.cookie).toEqual(answer.cookie);
      expect(told.more).toEqual(answer.more);
    }
  });

  it("cuts by bytes, at least one row an answer", async () => {
    const { client, pull } = await chat({ maxChangeBytes: 1 });
    let answers = 1;
    while (pull(answers === 1 ? [put("h", channelMessages("c1", 3))] : []).more) answers++;
    expect(answers).toBe(5);
    expect(client.keys()).toEqual(C1_ROWS);
  });

  it("reports a mutation's last id only in the answer that completes its rows", async () => {
    const { ns, client, pull } = await chat({ maxChangeRows: 1 });
    pull([put("h", channelMessages("c1", 3))]);
    while (client.cookie !== null && pull().more);
    ns.mutate("g", "c9", (run) =>
      run(
        "INSERT INTO message VALUES ('m5', 'c1', 'u1', 5, 'e'), ('m6', 'c1', 'u2', 6, 'f'), ('m7', 'c1', 'u1', 7, 'g')",
      ),
    );
    const reported: string[][] = [];
    for (let more = true; more; ) {
      const answer = pull();
      more = answer.more;
      const ids = answer.json.lastMutationIDChanges ?? {};
      if (Object.keys(ids).length > 0) {
        // Every row the mutation wrote is there when its id is.
        expect(client.keys()).toEqual(
          expect.arrayContaining(['message/["m5"]', 'message/["m6"]', 'message/["m7"]']),
        );
        expect(ids).toEqual({ c9: 1 });
      }
      reported.push(Object.keys(ids));
    }
    // Three puts (m5..m7) and three dels (m1..m3) at one row an answer; the id in the last.
    expect(reported).toEqual([[], [], [], [], [], ["c9"]]);
  });

  it("resumes a client that lost a part of a cut answer from the cookie of the part before it", async () => {
    const { ns, client, pull } = await chat({ maxChangeRows: 2 });
    const first = pull([put("h", channelMessages("c1", 3))]);
    expect(first.more).toBe(true);
    const before = client.cookie!;
    const lost = ns.pull({ cookie: before, clientGroupID: "g", queries: { patch: [] }, maxChangeRows: 2 });
    expect(lost.more).toBe(true);
    // The second answer never arrived: the client pulls from the first one's cookie and gets
    // the lost part's rows again, not a reset.
    const again = pull([], before);
    expect(again.reset).toBe(false);
    expect(again.json.rowsPatch).toEqual(lost.json.rowsPatch);
    while (pull().more);
    expect(client.keys()).toEqual(C1_ROWS);
    // The lost answer's cookie is not the group's, nor one it resumes from: a reset.
    expect(pull([], lost.cookie).reset).toBe(true);
  });

  it("resumes a client that lost the last part, with the ids that part reported", async () => {
    const { ns, client, pull } = await chat({ maxChangeRows: 2 });
    pull([put("h", channelMessages("c1", 3))]);
    ns.mutate("g", "c9", (run) => run("INSERT INTO message VALUES ('m5', 'c1', 'u1', 5, 'e')"));
    let previous = client.cookie!;
    let last = pull();
    while (last.more) {
      previous = client.cookie!;
      last = pull();
    }
    expect(last.json.lastMutationIDChanges).toEqual({ c9: 1 });
    // The last part is lost: the client is still at the part before it.
    client.cookie = previous;
    const again = pull([], previous);
    expect(again.reset).toBe(false);
    expect(again.json.rowsPatch).toEqual(last.json.rowsPatch);
    expect(again.json.lastMutationIDChanges).toEqual({ c9: 1 });
    expect(pull().json).toMatchObject({ unchanged: true });
  });

  it("catches up a client that lost the answer to a caught-up pull that changed its queries", async () => {
    const { client, pull } = await chat({});
    pull([put("h", channelMessages("c2", 1))]);
    const caughtUp = client.cookie!;
    const held = new Map(client.rows);
    const lost = pull([put("i", channelMessages("c1", 3))]);
    expect(lost.cookie).toBeGreaterThan(caughtUp);
    client.rows = held;
    client.cookie = caughtUp;
    // The client sends its patch again: the query is active already, and the rows it brought
    // come again, without a reset.
    const again = pull([put("i", channelMessages("c1", 3))]);
    expect(again.reset).toBe(false);
    expect(client.keys()).toEqual([...C1_ROWS.slice(0, 3), 'message/["m4"]', ...C1_ROWS.slice(3)]);
  });

  it("answers a plain pull at a cut answer's cookie", async () => {
    const { ns, pull } = await chat({ maxChangeRows: 1 });
    const cut = pull([put("h", channelMessages("c1", 3))]);
    const plain = ns.pull({ cookie: cut.cookie, clientGroupID: "other" });
    expect(plain.json).toEqual({ cookie: cut.cookie, unchanged: true });
  });
});
