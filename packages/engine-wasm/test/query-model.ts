// What the query-aware pull's model tests share: a seeded generator, the queries groups
// subscribe to, and the from-scratch evaluation a group's rows must equal.
import type { Engine } from "../src/engine.js";
import type { Visibility } from "../src/types.js";
import {
  channelMessages,
  channelsWrittenBy,
  chatSchema,
  messagesInChannelsNamed,
  usersNamedLike,
} from "./chat.js";
import type { Namespace } from "./fixtures.js";

/** A seeded generator, so that a failure replays. */
export function random(seed: number) {
  let state = seed;
  return (n: number) => {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    return state % n;
  };
}

const CHANNELS = ["c1", "c2", "c3"];
export const USERS = ["u1", "u2", "u3", "u4"];
// Messages may name an author that comes and goes.
const AUTHORS = [...USERS, "u5"];
// The queries a group may subscribe to: windows of a channel, and every user.
export const QUERIES: Record<string, unknown> = {
  c1w2: channelMessages("c1", 2),
  c1w4: channelMessages("c1", 4),
  c2w3: channelMessages("c2", 3),
  c3w1: channelMessages("c3", 1),
  users: usersNamedLike("A%"),
  // Messages in channels named "open": any change to channel may move them.
  open: messagesInChannelsNamed("open"),
  // Channels someone named "u1" wrote in: the EXISTS names the channel by its key.
  u1wrote: channelsWrittenBy("u1"),
};

/**
 * The group's rows a from-scratch evaluation of `names` gives (under `visibility`, if any), with
 * their current values.
 */
export function evaluate(
  ns: Namespace,
  engine: Engine,
  names: Iterable<string>,
  visibility?: Visibility,
): Map<string, unknown> {
  const expected = new Map<string, unknown>();
  for (const name of names) {
    for (const row of engine.queryRows(ns.db.adapter, QUERIES[name], visibility ? { visibility } : {})) {
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

/**
 * One random write as the model tests make them: a message put, moved or deleted, and sometimes
 * a user or a channel changed. `messages` counts the messages put so far; answers the new count.
 */
export function randomWrite(ns: Namespace, next: (n: number) => number, messages: number): number {
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
    ns.sql("UPDATE message SET at = ?, channelId = ? WHERE id = ?", [next(20), CHANNELS[next(3)]!, id]);
  else ns.sql("DELETE FROM message WHERE id = ?", [id]);
  const other = next(8);
  if (other === 0) ns.sql("UPDATE user SET name = ? WHERE id = ?", [next(2) ? "Ann" : "Bo", USERS[next(4)]!]);
  else if (other === 1) ns.sql("INSERT OR REPLACE INTO user VALUES ('u5', ?)", [next(2) ? "Ann" : "Bo"]);
  else if (other === 2) ns.sql("DELETE FROM user WHERE id = 'u5'");
  else if (other === 3)
    ns.sql("INSERT OR REPLACE INTO channel VALUES (?, ?)", [CHANNELS[next(3)]!, next(2) ? "open" : "shut"]);
  return messages;
}
