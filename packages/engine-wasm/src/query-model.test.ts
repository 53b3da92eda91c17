import { afterAll, describe, expect, it } from "vitest";
import { ClientRows, chatSchema } from "../test/chat.js";
import { DATABASES, testEngine } from "../test/databases.js";
import { Namespace } from "../test/fixtures.js";
import { evaluate, QUERIES, random, randomWrite, USERS } from "../test/query-model.js";
import type { QueryPatchOp } from "./types.js";

// The caps a run pulls under: none (one answer per pull), a row or a few, and a byte cap below
// two rows' size. `lose` drops some of the later answers of a cut pull, as a network would: the
// client pulls again from its previous cookie. `timed`: metered pulls with no time for their
// answers (answerMs 0), so that a reset evaluates one query a pull and defers the rest.
const CAPS = [
  { caps: "none", maxChangeRows: undefined, maxChangeBytes: undefined, lose: false, timed: false },
  { caps: "1 row", maxChangeRows: 1, maxChangeBytes: undefined, lose: false, timed: false },
  { caps: "2 rows, lost answers", maxChangeRows: 2, maxChangeBytes: undefined, lose: true, timed: false },
  { caps: "3 rows, 150 bytes", maxChangeRows: 3, maxChangeBytes: 150, lose: false, timed: false },
  {
    caps: "150 bytes, lost answers",
    maxChangeRows: undefined,
    maxChangeBytes: 150,
    lose: true,
    timed: false,
  },
  {
    caps: "no answer time, lost answers",
    maxChangeRows: undefined,
    maxChangeBytes: undefined,
    lose: true,
    timed: true,
  },
  {
    caps: "no answer time, 2 rows, lost answers",
    maxChangeRows: 2,
    maxChangeBytes: undefined,
    lose: true,
    timed: true,
  },
];

// Random writes, subscriptions and unsubscriptions by several groups: after each pull (pulled
// again until the answer is unchanged, as a client does), a group's rows equal a from-scratch
// evaluation of its active queries, with current values. Every answer's gotQueries names only
// queries whose rows the client then holds in full. The groups hold queries alike, so some copy
// rows from one another.
describe.each(DATABASES)("query-aware pull against a model on $kind", ({ open }) => {
  describe.each(CAPS)("caps: $caps", ({ maxChangeRows, maxChangeBytes, lose, timed }) => {
    // Groups took query rows from one another (assembly/query/membership.ts) in the runs, each of which
    // checks that they hold what an evaluation of their queries holds.
    let copied = 0;
    afterAll(() => expect(copied).toBeGreaterThan(0));
    it.each([1, 2, 3])("seed %i", async (seed) => {
      const next = random(seed);
      const engine = await testEngine();
      const ns = new Namespace(engine, open(), chatSchema);
      for (const id of USERS) ns.sql("INSERT INTO user VALUES (?, ?)", [id, `A${id}`]);
      const groups = ["g1", "g2", "g3"].map((id) => ({
        id,
        client: new ClientRows(),
        active: new Set<string>(),
      }));
      let messages = 0;
      let cut = 0;
      let lost = 0;
      for (let step = 0; step < 60; step++) {
        const action = next(10);
        if (action < 5) messages = randomWrite(ns, next, messages);
        const group = groups[next(groups.length)]!;
        let patch: QueryPatchOp[] = [];
        if (action >= 5) {
          const names = Object.keys(QUERIES);
          const name = names[next(names.length)]!;
          if (action === 9 && next(3) === 0) {
            patch.push({ op: "clear" });
            group.active.clear();
          } else if (group.active.has(name)) {
            patch.push({ op: "del", hash: name });
            group.active.delete(name);
          } else {
            patch.push({ op: "put", hash: name, name, args: null, ast: QUERIES[name] });
            group.active.add(name);
          }
        }
        // Now and then a client starts over from nothing (its storage was cleared): a reset of
        // every query its group holds.
        if (action === 8 && next(2) === 0) group.client = new ClientRows();
        let lostThisStep = false;
        for (let pulls = 0; ; pulls++) {
          expect(pulls).toBeLessThan(200);
          const result = ns.pull({
            cookie: group.client.cookie,
            clientGroupID: group.id,
            queries: { patch },
            ...(maxChangeRows === undefined ? {} : { maxChangeRows }),
            ...(maxChangeBytes === undefined ? {} : { maxChangeBytes }),
            ...(timed ? { queryBudgetMs: 60_000, answerMs: 0 } : {}),
          });
          if (result.json.unchanged) break;
          if (result.more) cut++;
          copied += result.queriesCopied;
          // One a step, as a lost answer costs the client a reset, which more losses would start
          // over. The client sends its patch again until an answer arrives.
          if (lose && !lostThisStep && next(3) === 0) {
            lost++;
            lostThisStep = true;
            continue;
          }
          patch = [];
          group.client.apply(result.json as never, chatSchema);
          const got = result.json.gotQueries ?? [];
          for (const [key, value] of evaluate(ns, engine, got))
            expect(group.client.rows.get(key)).toEqual(value);
        }
        const expected = evaluate(ns, engine, group.active);
        expect(Object.fromEntries(group.client.rows)).toEqual(Object.fromEntries(expected));
      }
      // The caps cut answers (and answers were lost) in every capped run.
      expect(cut > 0).toBe(maxChangeRows !== undefined || maxChangeBytes !== undefined || timed);
      expect(lost > 0).toBe(lose);
    });
  });
});
