import { describe, expect, it } from "vitest";
import {
  ClientRows,
  channelMessages,
  channelsWrittenBy,
  chatSchema,
  messagesInChannelsNamed,
} from "../test/chat.js";
import { DATABASES, testEngine } from "../test/databases.js";
import { Namespace } from "../test/fixtures.js";
import type { Engine } from "./engine.js";
import type { QueryPatchOp } from "./types.js";

/** A seeded generator, so that a failure replays. */
function random(seed: number) {
  let state = seed;
  return (n: number) => {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    return state % n;
  };
}

const CHANNELS = ["c1", "c2", "c3"];
const USERS = ["u1", "u2", "u3", "u4"];
// Messages may name an author that comes and goes.
const AUTHORS = [...USERS, "u5"];
// The queries a group may subscribe to: windows of a channel, and every user.
const QUERIES: Record<string, unknown> = {
  c1w2: channelMessages("c1", 2),
  c1w4: channelMessages("c1", 4),
  c2w3: channelMessages("c2", 3),
  c3w1: channelMessages("c3", 1),
  users: {
    table: "user",
    where: {
      type: "simple",
      op: "LIKE",
      left: { type: "column", name: "name" },
      right: { type: "literal", value: "A%" },
    },
  },
  // Messages in channels named "open": any change to channel may move them.
  open: messagesInChannelsNamed("open"),
  // Channels someone named "u1" wrote in: the EXISTS names the channel by its key.
  u1wrote: channelsWrittenBy("u1"),
};

/** The group's rows a from-scratch evaluation of `names` gives, with their current values. */
function evaluate(ns: Namespace, engine: Engine, names: Iterable<string>): Map<string, unknown> {
  const expected = new Map<string, unknown>();
  for (const name of names) {
    for (const row of engine.queryRows(ns.db.adapter, QUERIES[name])) {
      const value = ns.db.adapter.query(
        `SELECT json_object(${Object.keys(chatSchema.tables[row.table as "user"].columns)
          .map((c) => `'${c}', ${c}`)
          .join(", ")}) FROM ${row.table} WHERE id = ?`,
        [row.key[0] as string],
      )[0]![0] as string;
      expected.set(`${row.table}/${JSON.stringify(row.key)}`, JSON.parse(value));
    }
  }
  return expected;
}

// The caps a run pulls under: none (one answer per pull), a row or a few, and a byte cap below
// two rows' size. `lose` drops some of the later answers of a cut pull, as a network would: the
// client pulls again from its previous cookie.
const CAPS = [
  { caps: "none", maxChangeRows: undefined, maxChangeBytes: undefined, lose: false },
  { caps: "1 row", maxChangeRows: 1, maxChangeBytes: undefined, lose: false },
  { caps: "2 rows, lost answers", maxChangeRows: 2, maxChangeBytes: undefined, lose: true },
  { caps: "3 rows, 150 bytes", maxChangeRows: 3, maxChangeBytes: 150, lose: false },
  { caps: "150 bytes, lost answers", maxChangeRows: undefined, maxChangeBytes: 150, lose: true },
];

// Random writes, subscriptions and unsubscriptions by several groups: after each pull (pulled
// again until the answer is unchanged, as a client does), a group's rows equal a from-scratch
// evaluation of its active queries, with current values. Every answer's gotQueries names only
// queries whose rows the client then holds in full.
describe.each(DATABASES)("query-aware pull against a model on $kind", ({ open }) => {
  describe.each(CAPS)("caps: $caps", ({ maxChangeRows, maxChangeBytes, lose }) => {
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
        if (action < 5) {
          const id = `m${next(12)}`;
          const kind = next(3);
          if (kind === 0 || messages === 0) {
            ns.sql("INSERT OR REPLACE INTO message VALUES (?, ?, ?, ?, 't')", [
              id,
              CHANNELS[next(3)]!,
              AUTHORS[next(5)]!,
              next(20),
            ]);
            messages++;
          } else if (kind === 1)
            ns.sql("UPDATE message SET at = ?, channelId = ? WHERE id = ?", [
              next(20),
              CHANNELS[next(3)]!,
              id,
            ]);
          else ns.sql("DELETE FROM message WHERE id = ?", [id]);
          const other = next(8);
          if (other === 0)
            ns.sql("UPDATE user SET name = ? WHERE id = ?", [next(2) ? "Ann" : "Bo", USERS[next(4)]!]);
          else if (other === 1)
            ns.sql("INSERT OR REPLACE INTO user VALUES ('u5', ?)", [next(2) ? "Ann" : "Bo"]);
          else if (other === 2) ns.sql("DELETE FROM user WHERE id = 'u5'");
          else if (other === 3)
            ns.sql("INSERT OR REPLACE INTO channel VALUES (?, ?)", [
              CHANNELS[next(3)]!,
              next(2) ? "open" : "shut",
            ]);
        }
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
        let lostThisStep = false;
        for (let pulls = 0; ; pulls++) {
          expect(pulls).toBeLessThan(200);
          const result = ns.pull({
            cookie: group.client.cookie,
            clientGroupID: group.id,
            queries: { patch },
            ...(maxChangeRows === undefined ? {} : { maxChangeRows }),
            ...(maxChangeBytes === undefined ? {} : { maxChangeBytes }),
          });
          if (result.json.unchanged) break;
          if (result.more) cut++;
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
      expect(cut > 0).toBe(maxChangeRows !== undefined || maxChangeBytes !== undefined);
      expect(lost > 0).toBe(lose);
    });
  });
});
