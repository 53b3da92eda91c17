import { describe, expect, it } from "vitest";
import { ClientRows, channelMessages, chatSchema, groupClients } from "../test/chat.js";
import { DATABASES, testEngine } from "../test/databases.js";
import { Namespace } from "../test/fixtures.js";
import { evaluate, QUERIES, random, randomWrite, USERS } from "../test/query-model.js";
import type { PullInput, QueryPatchOp, Visibility } from "./types.js";

// A query-aware pull reads the change log through the change keys where the visibility filter
// narrows (assembly/query/pull.ts): a caught-up group's pull reads the changes of the rows its
// user may see, not every change since its cookie, and answers as if it had read them all.
const authoredBy = (authorId: string): Visibility => ({
  message: { sql: "authorId = ?", params: [authorId] },
});
const put = {
  op: "put",
  hash: "h",
  name: "channel",
  args: ["c1"],
  ast: channelMessages("c1", 10),
} satisfies QueryPatchOp;

/**
 * Poisons the log rows of the changes to messages b*: the last ten name message m0 (a pull that
 * reads one sends m0, which did not change), the others become unreadable (a pull that reads one
 * fails, as its key is no longer JSON). So a pull that answers without m0 read none of them.
 */
function poisonChangesOfB(ns: Namespace): number {
  const b = "tbl = 'message' AND json_extract(pk, '$[0]') LIKE 'b%'";
  const named = ns.db.adapter.exec(
    `UPDATE _weir_changes SET pk = '["m0"]' WHERE seq IN (SELECT seq FROM _weir_changes WHERE ${b} ORDER BY seq DESC LIMIT 10)`,
    [],
  );
  return named + ns.db.adapter.exec(`UPDATE _weir_changes SET pk = 'unreadable' WHERE ${b}`, []);
}

describe.each(DATABASES)("query-aware pulls read through change keys on $kind", ({ open }) => {
  it("a caught-up group of u1 reads u1's changes only, whole or cut by caps", async () => {
    const ns = new Namespace(await testEngine(), open(), chatSchema);
    ns.sql("INSERT INTO channel VALUES ('c1', 'one')");
    ns.sql("INSERT INTO user VALUES ('u1', 'Ann'), ('u2', 'Bo')");
    ns.sql("INSERT INTO message VALUES ('m0', 'c1', 'u1', 0, 'z'), ('m1', 'c1', 'u1', 1, 'a')");
    const clients = groupClients(ns, put);
    const pull = (group: string, userID: string, visibility: Visibility, input: Partial<PullInput> = {}) =>
      clients.pull(group, { userID, visibility, ...input });
    const expected = (visibility: Visibility) => evaluateOne(ns, visibility);
    for (const group of ["ga", "gc"]) pull(group, "u1", authoredBy("u1"));
    pull("gb", "u2", authoredBy("u2"));
    // A filter keys do not narrow.
    const whole: Visibility = { message: { sql: "authorId IN (?)", params: ["u1"] } };
    pull("gw", "u1", whole);
    for (let i = 0; i < 20; i++) ns.sql("INSERT INTO message VALUES (?, 'c1', 'u2', ?, 'b')", [`b${i}`, i]);
    ns.sql("UPDATE message SET text = 'edited' WHERE id = 'm1'");
    ns.sql("INSERT INTO message VALUES ('m2', 'c1', 'u1', 2, 'c')");
    for (let i = 0; i < 20; i++) ns.sql("UPDATE message SET at = at + 1 WHERE id = ?", [`b${i}`]);
    // u2's pull notes the keys of the changes since they were last noted; u1's then read hers.
    pull("gb", "u2", authoredBy("u2"));
    expect(ns.db.transaction(() => poisonChangesOfB(ns))).toBe(40);
    const sent = (result: ReturnType<typeof pull>) =>
      (result.json.rowsPatch ?? []).map((op) => `${op.op} ${String((op.value ?? op.id)?.id)}`);
    expect(sent(pull("ga", "u1", authoredBy("u1")))).toEqual(["put m1", "put m2"]);
    expect(clients.rows("ga")).toEqual(expected(authoredBy("u1")));
    // An answer cut by a cap owes the rows that changed, read the same way.
    const cut: string[] = [];
    for (let pulls = 0; ; pulls++) {
      expect(pulls).toBeLessThan(5);
      const result = pull("gc", "u1", authoredBy("u1"), { maxChangeRows: 1 });
      if (result.json.unchanged) break;
      cut.push(...sent(result));
    }
    expect(cut.sort()).toEqual(["put m1", "put m2"]);
    expect(clients.rows("gc")).toEqual(expected(authoredBy("u1")));
    // The filter that does not narrow reads every change since the cookie, the b* ones too.
    expect(() => pull("gw", "u1", whole)).toThrow(/JSON/);
  });

  // Groups alike share their rows (query/lend.ts): a group's fresh query, or a reset's queries
  // all at once, are copied from a group of the same visibility behind the watermark when no
  // change since the lender's cookie can affect them. That test reads the changes through the
  // keys too: other users' changes are never read.
  it("lending between a user's groups reads that user's changes only", async () => {
    const ns = new Namespace(await testEngine(), open(), chatSchema);
    ns.sql("INSERT INTO channel VALUES ('c1', 'one'), ('c2', 'two')");
    ns.sql("INSERT INTO user VALUES ('u1', 'Ann'), ('u2', 'Bo')");
    ns.sql("INSERT INTO message VALUES ('m0', 'c1', 'u1', 0, 'z'), ('m1', 'c2', 'u1', 1, 'a')");
    const clients = groupClients(ns, put);
    const other: QueryPatchOp = { ...put, hash: "o", args: ["c2"], ast: channelMessages("c2", 10) };
    const pull = (group: string, userID: string, input: Partial<PullInput> = {}) =>
      clients.pull(group, { userID, visibility: authoredBy(userID), ...input });
    // u1's groups: one holding the channel, two holding both channels (twins).
    pull("ga", "u1");
    for (const group of ["gc", "gd"]) pull(group, "u1", { queries: { patch: [put, other] } });
    pull("gb", "u2");
    for (let i = 0; i < 20; i++) ns.sql("INSERT INTO message VALUES (?, 'c1', 'u2', ?, 'b')", [`b${i}`, i]);
    // u1's change moves neither query: the lenders still lend, having read it.
    ns.sql("INSERT INTO message VALUES ('m2', 'c3', 'u1', 2, 'c')");
    for (let i = 0; i < 20; i++) ns.sql("UPDATE message SET at = at + 1 WHERE id = ?", [`b${i}`]);
    pull("gb", "u2");
    expect(ns.db.transaction(() => poisonChangesOfB(ns))).toBe(40);
    // A new group's query is copied from a group behind (ga, gc or gd).
    const fresh = pull("gn", "u1");
    expect(fresh.queriesCopied).toBe(1);
    expect(clients.keys("gn")).toEqual(keysOf(evaluateOne(ns, authoredBy("u1"))));
    // A reset copies both queries at once from its twin behind (gd).
    const reset = pull("gc", "u1", { cookie: null });
    expect(reset.reset).toBe(true);
    expect(reset.queriesCopied).toBe(2);
    expect(clients.keys("gc")).toEqual(
      [...new Set([...clients.keys("gn"), ...keysOf(evaluateOne(ns, authoredBy("u1"), other.ast))])].sort(),
    );
  });

  // Random writes and subscriptions by groups of several users, each under a filter that keys
  // narrow, some of them behind their group's answers now and then: pulled until unchanged, a
  // group's rows equal a from-scratch evaluation of its queries under its filter.
  it.each([1, 2, 3])("answers a model of users under narrowing filters, seed %i", async (seed) => {
    const lcg = random(seed);
    const next = (n: number) => Math.floor((lcg(2 ** 30) / 2 ** 30) * n);
    const engine = await testEngine();
    const ns = new Namespace(engine, open(), chatSchema);
    for (const id of USERS) ns.sql("INSERT INTO user VALUES (?, ?)", [id, `A${id}`]);
    const groups = ["g1", "g2", "g3", "g4", "g5"].map((id, i) => ({
      id,
      user: USERS[i % 2]!,
      client: new ClientRows(),
      active: new Set<string>(),
      pending: [] as QueryPatchOp[],
      held: [] as Array<{ cookie: number | null; rows: Map<string, unknown> }>,
    }));
    let behind = 0;
    for (let step = 0; step < 60; step++) {
      const action = next(12);
      if (action < 6) randomWrite(ns, next, 1);
      const group = groups[next(groups.length)]!;
      if (action >= 6 && action < 9) {
        const names = Object.keys(QUERIES);
        const name = names[next(names.length)]!;
        // The groups of a user subscribe alike (as the tabs of an app do) and follow one another.
        for (const each of groups.filter((g) => g.user === group.user)) {
          each.pending.push(
            each.active.has(name)
              ? { op: "del", hash: name }
              : { op: "put", hash: name, name, args: null, ast: QUERIES[name] },
          );
          if (each.active.has(name)) each.active.delete(name);
          else each.active.add(name);
        }
      }
      if (action >= 10 && group.held.length > 1) {
        const back = group.held[group.held.length - 1 - next(Math.min(4, group.held.length))]!;
        if (back.cookie !== group.client.cookie) {
          behind++;
          group.client.cookie = back.cookie;
          group.client.rows = new Map(back.rows);
        }
      }
      const visibility = authoredBy(group.user);
      let patch = group.pending;
      group.pending = [];
      for (let pulls = 0; ; pulls++) {
        expect(pulls).toBeLessThan(100);
        const result = ns.pull({
          cookie: group.client.cookie,
          clientGroupID: group.id,
          userID: group.user,
          visibility,
          queries: { patch },
          followers: groups.filter((g) => g !== group && g.user === group.user).map((g) => g.id),
          ...(seed === 3 ? { maxChangeRows: 2 } : {}),
        });
        patch = [];
        if (result.json.unchanged) break;
        group.client.apply(result.json as never, chatSchema);
        group.held.push({ cookie: group.client.cookie, rows: new Map(group.client.rows) });
        // The followers' clients get the answer the leader's pull gave them, as a host sends it.
        for (const answer of result.followed ?? []) {
          const follower = groups.find((g) => g.id === answer.clientGroupID)!;
          follower.client.apply(JSON.parse(answer.body) as never, chatSchema);
          follower.held.push({ cookie: follower.client.cookie, rows: new Map(follower.client.rows) });
        }
      }
      const rows = evaluate(ns, engine, group.active, visibility);
      expect(Object.fromEntries(group.client.rows)).toEqual(Object.fromEntries(rows));
    }
    expect(behind).toBeGreaterThan(0);
    // The pulls read by keys.
    expect(Number(ns.db.adapter.query("SELECT count(*) FROM _weir_change_keys", [])[0]![0])).toBeGreaterThan(
      0,
    );
  });
});

function evaluateOne(ns: Namespace, visibility: Visibility, ast: unknown = put.ast): Map<string, unknown> {
  QUERIES.h = ast;
  try {
    return evaluate(ns, ns.engine, ["h"], visibility);
  } finally {
    delete QUERIES.h;
  }
}

function keysOf(rows: Map<string, unknown>): string[] {
  return [...rows.keys()].sort();
}
