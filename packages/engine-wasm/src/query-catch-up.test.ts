import { describe, expect, it } from "vitest";
import { ClientRows, chatSchema } from "../test/chat.js";
import { DATABASES, testEngine } from "../test/databases.js";
import { Namespace } from "../test/fixtures.js";
import { evaluate, QUERIES, random, randomWrite, USERS } from "../test/query-model.js";
import type { QueryPatchOp } from "./types.js";

// Clients that miss answers: random writes and subscriptions by groups of one user, pulled
// with the other groups as followers, and now and then a client back at a cookie it held a few
// answers ago (its socket dropped as they went out). Pulled from there until unchanged, its rows
// equal a from-scratch evaluation of its queries; and without caps it catches up without a
// reset, from the changes and the rows whose holding moved since its cookie.
const CAPS = [
  { caps: "none", maxChangeRows: undefined },
  { caps: "2 rows", maxChangeRows: 2 },
];

describe.each(DATABASES)("a query-aware client behind its group's answers on $kind", ({ open }) => {
  describe.each(CAPS)("caps: $caps", ({ maxChangeRows }) => {
    it.each([1, 2, 3])("seed %i", async (seed) => {
      // The generator's high bits: its low ones repeat with a short period.
      const lcg = random(seed);
      const next = (n: number) => Math.floor((lcg(2 ** 30) / 2 ** 30) * n);
      const engine = await testEngine();
      const ns = new Namespace(engine, open(), chatSchema);
      for (const id of USERS) ns.sql("INSERT INTO user VALUES (?, ?)", [id, `A${id}`]);
      const groups = ["g1", "g2", "g3"].map((id) => ({
        id,
        client: new ClientRows(),
        /** The queries the group subscribed to, and the changes it has yet to send. */
        active: new Set<string>(),
        pending: [] as QueryPatchOp[],
        /** The states the client held after its pulls: where a client that misses answers is back at. */
        held: [] as Array<{ cookie: number | null; rows: Map<string, unknown> }>,
      }));
      // Every group subscribes alike (as the tabs of an app do): they often hold the same state,
      // and follow one another's pulls.
      const subscribed = new Set<string>();
      let messages = 0;
      let followed = 0;
      let behind = 0;
      let caughtUp = 0;
      for (let step = 0; step < 80; step++) {
        const action = next(12);
        if (action < 5) messages = randomWrite(ns, next, messages);
        const group = groups[next(groups.length)]!;
        if (action >= 5 && action < 8) {
          const names = Object.keys(QUERIES);
          const name = names[next(names.length)]!;
          const op: QueryPatchOp = subscribed.has(name)
            ? { op: "del", hash: name }
            : { op: "put", hash: name, name, args: null, ast: QUERIES[name] };
          if (subscribed.has(name)) subscribed.delete(name);
          else subscribed.add(name);
          for (const each of groups) each.pending.push(op);
        }
        if (action >= 9 && group.held.length > 1) {
          const back = group.held[group.held.length - 1 - next(Math.min(4, group.held.length))]!;
          if (back.cookie !== group.client.cookie) {
            behind++;
            group.client.cookie = back.cookie;
            group.client.rows = new Map(back.rows);
          }
        }
        const from = group.client.cookie;
        let patch = group.pending;
        group.pending = [];
        for (const op of patch) {
          if (op.op === "put") group.active.add(op.hash);
          else if (op.op === "del") group.active.delete(op.hash);
        }
        for (let pulls = 0; ; pulls++) {
          expect(pulls).toBeLessThan(200);
          const result = ns.pull({
            cookie: group.client.cookie,
            clientGroupID: group.id,
            userID: "u1",
            queries: { patch },
            followers: groups.filter((g) => g !== group).map((g) => g.id),
            ...(maxChangeRows === undefined ? {} : { maxChangeRows }),
          });
          if (result.json.unchanged) break;
          if (pulls === 0 && action >= 9 && from !== null && !result.reset) caughtUp++;
          patch = [];
          group.client.apply(result.json as never, chatSchema);
          // The followers' clients get the answer the leader's pull gave them, as a host sends it.
          for (const answer of result.followed ?? []) {
            followed++;
            const follower = groups.find((g) => g.id === answer.clientGroupID)!;
            follower.client.apply(JSON.parse(answer.body) as never, chatSchema);
            follower.held.push({ cookie: follower.client.cookie, rows: new Map(follower.client.rows) });
          }
        }
        group.held.push({ cookie: group.client.cookie, rows: new Map(group.client.rows) });
        expect(Object.fromEntries(group.client.rows), `${group.id} at step ${step}`).toEqual(
          Object.fromEntries(evaluate(ns, engine, group.active)),
        );
      }
      expect(followed).toBeGreaterThan(0);
      expect(behind).toBeGreaterThan(0);
      if (maxChangeRows === undefined) expect(caughtUp).toBeGreaterThan(0);
    });
  });
});
