import { describe, expect, it } from "vitest";
import { ClientRows, channelMessages, chatSchema } from "../test/chat.js";
import { DATABASES, testEngine } from "../test/databases.js";
import { Namespace, type PullBody } from "../test/fixtures.js";
import { evaluate, QUERIES, random, randomWrite, USERS } from "../test/query-model.js";
import type { PullInput, QueryPatchOp } from "./types.js";

const put = (name: string, ast: unknown = QUERIES[name]): QueryPatchOp => ({
  op: "put",
  hash: name,
  name,
  args: null,
  ast,
});

describe.each(DATABASES)("followers of a query-aware pull on $kind", ({ open }) => {
  async function chat() {
    const engine = await testEngine();
    const ns = new Namespace(engine, open(), chatSchema);
    for (const id of USERS) ns.sql("INSERT INTO user VALUES (?, ?)", [id, `A${id}`]);
    ns.sql("INSERT INTO message VALUES ('m1', 'c1', 'u1', 1, 't')");
    /** A group's pull, caught up on its own first when it has no cookie. */
    const pull = (group: string, user: string, cookie: number | null, input: Partial<PullInput> = {}) =>
      ns.pull({ clientGroupID: group, userID: user, cookie, ...input });
    return { engine, ns, pull };
  }

  it("takes the leader's answer only where the follower holds the same state", async () => {
    const { engine, ns, pull } = await chat();
    const cookies = new Map<string, number>();
    const subscribe = (group: string, user: string, patch: QueryPatchOp[]) =>
      cookies.set(group, pull(group, user, null, { queries: { patch } }).cookie);
    for (const group of ["g1", "g2", "g3"]) subscribe(group, "u1", [put("c1w2")]);
    subscribe("other-user", "u2", [put("c1w2")]);
    subscribe("other-plan", "u1", [put("c1w2", channelMessages("c1", 3))]);
    subscribe("more-queries", "u1", [put("c1w2"), put("users")]);
    subscribe("behind", "u1", [put("c1w2")]);
    ns.sql("INSERT INTO message VALUES ('m2', 'c1', 'u2', 2, 't')");
    // "behind" took an answer at a cookie its client never saw: its stored cookie moved on.
    pull("behind", "u1", cookies.get("behind")!);
    ns.sql("INSERT INTO message VALUES ('m3', 'c1', 'u3', 3, 't')");
    const cookie = cookies.get("g1")!;
    const followers = ["g2", "g3", "other-user", "other-plan", "more-queries", "behind", "nobody", "g1"];
    const leader = pull("g1", "u1", cookie, { queries: { patch: [] }, followers });
    expect(leader.followed?.map((f) => f.clientGroupID).sort()).toEqual(["g2", "g3"]);
    for (const follower of leader.followed!) {
      // The answer g2's own pull would have given, and its membership moved with it.
      expect(JSON.parse(follower.body)).toEqual(leader.json);
      expect(follower.cookie).toBe(leader.cookie);
      const again = pull(follower.clientGroupID, "u1", leader.cookie, { queries: { patch: [] } });
      expect(again.json.unchanged).toBe(true);
    }
    const rows = new ClientRows();
    rows.apply(pull("fresh", "u1", null, { queries: { patch: [put("c1w2")] } }).json as never, chatSchema);
    const g2 = new ClientRows();
    g2.apply(pull("g2", "u1", null).json as never, chatSchema);
    expect(g2.keys()).toEqual(rows.keys());
    expect(Object.fromEntries(g2.rows)).toEqual(Object.fromEntries(evaluate(ns, engine, ["c1w2"])));
    // The others were left for pulls of their own, incremental from their cookies.
    for (const [group, user] of [
      ["other-user", "u2"],
      ["other-plan", "u1"],
      ["more-queries", "u1"],
    ] as const) {
      const own = pull(group, user, cookies.get(group)!, { queries: { patch: [] } });
      expect(own.reset).toBe(false);
      expect(own.json.rowsPatch?.length).toBeGreaterThan(0);
    }
  });

  it("takes no followers for an answer cut by a cap, or one that changes the leader's queries", async () => {
    const { ns, pull } = await chat();
    const first = pull("g1", "u1", null, { queries: { patch: [put("c1w4")] } }).cookie;
    const second = pull("g2", "u1", null, { queries: { patch: [put("c1w4")] } }).cookie;
    expect(second).toBe(first);
    for (let i = 2; i < 6; i++) ns.sql(`INSERT INTO message VALUES ('m${i}', 'c1', 'u1', ${i}, 't')`);
    const cut = pull("g1", "u1", first, { queries: { patch: [] }, followers: ["g2"], maxChangeRows: 1 });
    expect(cut.more).toBe(true);
    expect(cut.followed).toEqual([]);
    const changing = pull("g2", "u1", first, { queries: { patch: [put("users")] }, followers: ["g1"] });
    expect(changing.followed).toEqual([]);
  });

  // The model test's writes with groups that mostly subscribe alike, so that many pulls have
  // followers: after each round every group's rows equal a from-scratch evaluation of its
  // queries, followed or not, and caps and lost answers leave no follower wrong.
  describe.each([
    { caps: "none", maxChangeRows: undefined, lose: false },
    { caps: "2 rows, lost answers", maxChangeRows: 2, lose: true },
  ])("caps: $caps", ({ maxChangeRows, lose }) => {
    it.each([1, 2, 3])("seed %i", async (seed) => {
      const next = random(seed);
      const { engine, ns } = await chat();
      const groups = ["g1", "g2", "g3", "g4", "h1"].map((id) => ({
        id,
        user: id.startsWith("h") ? "u2" : "u1",
        client: new ClientRows(),
        active: new Set<string>(),
        patch: [] as QueryPatchOp[],
      }));
      const caps = maxChangeRows === undefined ? {} : { maxChangeRows };
      let messages = 1;
      let followed = 0;
      for (let step = 0; step < 40; step++) {
        messages = randomWrite(ns, next, messages);
        if (next(3) === 0) {
          // A query put or dropped by every group, or by one.
          const names = Object.keys(QUERIES);
          const name = names[next(names.length)]!;
          const alike = next(3) !== 0;
          for (const group of alike ? groups : [groups[next(groups.length)]!]) {
            if (group.active.has(name)) {
              group.patch.push({ op: "del", hash: name });
              group.active.delete(name);
            } else {
              group.patch.push(put(name));
              group.active.add(name);
            }
          }
        }
        const leader = groups[next(groups.length)]!;
        const followers = groups.filter((g) => g !== leader && g.client.cookie === leader.client.cookie);
        const answer = ns.pull({
          clientGroupID: leader.id,
          userID: leader.user,
          cookie: leader.client.cookie,
          queries: { patch: leader.patch },
          followers: followers.map((g) => g.id),
          ...caps,
        });
        const took = new Set<string>();
        if (!(lose && next(3) === 0)) {
          leader.patch = [];
          leader.client.apply(answer.json as never, chatSchema);
          for (const follower of answer.followed ?? []) {
            const group = groups.find((g) => g.id === follower.clientGroupID)!;
            expect(group.user).toBe(leader.user);
            group.client.apply(JSON.parse(follower.body) as never, chatSchema);
            took.add(group.id);
            followed++;
          }
        }
        // Every group then pulls on its own until unchanged, as a client does, in rounds until all
        // are at one cookie (a cut answer commits a version of its own, which the groups caught
        // up before it then pull).
        for (let round = 0; round < 10; round++) {
          for (const group of groups) {
            for (let pulls = 0; ; pulls++) {
              expect(pulls).toBeLessThan(200);
              const result = ns.pull({
                clientGroupID: group.id,
                userID: group.user,
                cookie: group.client.cookie,
                queries: { patch: group.patch },
                ...caps,
              });
              if ((result.json as PullBody).unchanged) break;
              if (lose && next(5) === 0) continue;
              group.patch = [];
              group.client.apply(result.json as never, chatSchema);
            }
            const expected = evaluate(ns, engine, group.active);
            expect(Object.fromEntries(group.client.rows)).toEqual(Object.fromEntries(expected));
          }
          if (groups.every((g) => g.client.cookie === groups[0]!.client.cookie)) break;
        }
        // A follower's answer leaves nothing for its own pull to fix: checked above; and it took
        // one only when the leader's answer was whole.
        if (took.size > 0) expect(answer.more).toBe(false);
      }
      expect(followed).toBeGreaterThan(0);
    });
  });
});
