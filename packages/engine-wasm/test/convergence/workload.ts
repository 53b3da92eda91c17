// What the convergence test does: the schema it syncs, the filters its users see it through,
// and random workloads of writes, pulls and resets, each drawn from a profile of its own.
import fc from "fast-check";
import type { Schema, SqlValue, Visibility } from "../../src/types.js";
import type { TestDatabase } from "../databases.js";

export const USERS = ["1", "2", "3"] as const;
export const GROUPS = [
  { id: "g1a", user: 0, clients: ["c1a", "c1b"] },
  { id: "g1b", user: 0, clients: ["c1c"] },
  { id: "g2", user: 1, clients: ["c2a", "c2b"] },
  { id: "g3", user: 2, clients: ["c3a"] },
] as const;
export const TODO_IDS = ["t0", "t1", "t2"];
// The last id is beyond 2^53: keys must survive the round trip exactly.
const CARD_IDS = [1n, 2n ** 53n + 1n, 2n];
// REALs that 15 significant digits do not tell apart: 0.3 and 0.1 + 0.2, for instance.
export const SCORES = [0.30000000000000004, 1 / 3, 2 / 3, 0.3];
const BULK = 6;

export const convergenceSchema = {
  tables: {
    todo: {
      columns: { id: "string", owner: "string", text: "string", done: "boolean", sort: "number" },
      primaryKey: ["id"],
    },
    card: {
      columns: {
        id: "integer",
        uid: "integer",
        score: "number",
        flag: "boolean",
        label: { type: "string", nullable: true },
      },
      primaryKey: ["id"],
    },
  },
} satisfies Schema;

/** Claims travel as strings (as a JWT carries them): the filters compare them with typed columns. */
export function filters(user: string): Visibility {
  const score = String(SCORES[Number(user) - 1]);
  return {
    todo: { sql: "owner = ?", params: [user] },
    card: { sql: "uid = ? OR (flag = ? AND score = ?)", params: [user, "1", score] },
  };
}

export type Write =
  | { kind: "todo"; how: "upsert" | "replace"; id: number; owner: number; text: string }
  | { kind: "deleteTodo"; id: number }
  | { kind: "card"; how: "upsert" | "replace"; id: number; uid: number; score: number; flag: boolean }
  | { kind: "moveCard"; from: number; to: number }
  | { kind: "bulk"; owner: number; count: number }
  | { kind: "deleteBulk" };

export type Action =
  | { kind: "mutate"; group: number; client: number; writes: Write[] }
  | { kind: "outside"; writes: Write[] }
  | { kind: "pull"; group: number; maxRows: number; maxBytes: number }
  | { kind: "visibility" }
  | { kind: "prune"; retain: number }
  | { kind: "invalidate" }
  | { kind: "reopen" };

/**
 * What one workload exercises. Each workload draws its own (swarm testing): a workload of a few
 * rows, two users and tiny caps finds what a workload of everything at once dilutes.
 */
interface Profile {
  users: number;
  todos: number;
  cards: number;
  writes: readonly Write["kind"][];
  rowCaps: readonly number[];
  byteCaps: readonly number[];
  pullWeight: number;
  resets: readonly ("visibility" | "prune" | "invalidate" | "reopen" | "outside")[];
}

const profile: fc.Arbitrary<Profile> = fc.record({
  users: fc.integer({ min: 2, max: USERS.length }),
  todos: fc.integer({ min: 1, max: TODO_IDS.length }),
  cards: fc.integer({ min: 1, max: CARD_IDS.length }),
  writes: fc.subarray(["todo", "deleteTodo", "card", "moveCard", "bulk", "deleteBulk"] as const, {
    minLength: 1,
  }),
  rowCaps: fc.subarray([1, 2, 3, 10_000], { minLength: 1 }),
  byteCaps: fc.subarray([1, 150, 400, 2_000_000], { minLength: 1 }),
  pullWeight: fc.integer({ min: 1, max: 6 }),
  resets: fc.subarray(["visibility", "prune", "invalidate", "reopen", "outside"] as const),
});

function writeFor(p: Profile): fc.Arbitrary<Write> {
  const todo = fc.nat(p.todos - 1);
  const card = fc.nat(p.cards - 1);
  const owner = fc.nat(p.users - 1);
  const byKind: Record<Write["kind"], fc.Arbitrary<Write>> = {
    todo: fc.record({
      kind: fc.constant("todo" as const),
      how: fc.constantFrom("upsert" as const, "replace" as const),
      id: todo,
      owner,
      text: fc.string({ maxLength: 4 }),
    }),
    deleteTodo: fc.record({ kind: fc.constant("deleteTodo" as const), id: todo }),
    card: fc.record({
      kind: fc.constant("card" as const),
      how: fc.constantFrom("upsert" as const, "replace" as const),
      id: card,
      uid: fc.integer({ min: 1, max: p.users }),
      score: fc.nat(SCORES.length - 1),
      flag: fc.boolean(),
    }),
    moveCard: fc.record({ kind: fc.constant("moveCard" as const), from: card, to: card }),
    bulk: fc.record({ kind: fc.constant("bulk" as const), owner, count: fc.integer({ min: 1, max: BULK }) }),
    deleteBulk: fc.constant({ kind: "deleteBulk" as const }),
  };
  return fc.oneof(...p.writes.map((kind) => byKind[kind]));
}

function actionFor(p: Profile): fc.Arbitrary<Action> {
  const writes = fc.array(writeFor(p), { minLength: 1, maxLength: 2 });
  // Groups of the users in play only.
  const groups = GROUPS.flatMap((group, index) => (group.user < p.users ? [index] : []));
  const resets: Record<Profile["resets"][number], fc.Arbitrary<Action>> = {
    visibility: fc.constant({ kind: "visibility" as const }),
    prune: fc.record({ kind: fc.constant("prune" as const), retain: fc.integer({ min: 2, max: 40 }) }),
    invalidate: fc.constant({ kind: "invalidate" as const }),
    reopen: fc.constant({ kind: "reopen" as const }),
    outside: fc.record({ kind: fc.constant("outside" as const), writes }),
  };
  return fc.oneof(
    {
      weight: 6,
      arbitrary: fc.record({
        kind: fc.constant("mutate" as const),
        group: fc.constantFrom(...groups),
        client: fc.nat(1),
        writes,
      }),
    },
    {
      weight: p.pullWeight,
      arbitrary: fc.record({
        kind: fc.constant("pull" as const),
        group: fc.constantFrom(...groups),
        maxRows: fc.constantFrom(...p.rowCaps),
        maxBytes: fc.constantFrom(...p.byteCaps),
      }),
    },
    ...p.resets.map((kind) => ({ weight: 1, arbitrary: resets[kind] })),
  );
}

/** A workload: a profile and actions drawn from it. */
export function workload(length: { minLength: number; maxLength: number }): fc.Arbitrary<Action[]> {
  return profile.chain((p) => fc.array(actionFor(p), length));
}

export function cardID(index: number): number | bigint {
  const id = CARD_IDS[index]!;
  return id <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(id) : id;
}

/** The SQL a mutator would run for a write (raw statements, REPLACE and UPSERT included). */
export function runWrite(db: TestDatabase, w: Write): void {
  const exec = (sql: string, params: SqlValue[] = []) => db.adapter.exec(sql, params);
  switch (w.kind) {
    case "todo": {
      const values = [TODO_IDS[w.id]!, USERS[w.owner]!, w.text, w.text.length % 2, w.text.length / 4];
      if (w.how === "replace")
        exec("INSERT OR REPLACE INTO todo (id, owner, text, done, sort) VALUES (?, ?, ?, ?, ?)", values);
      else
        exec(
          "INSERT INTO todo (id, owner, text, done, sort) VALUES (?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET owner = excluded.owner, text = excluded.text, done = excluded.done, sort = excluded.sort",
          values,
        );
      return;
    }
    case "deleteTodo":
      exec("DELETE FROM todo WHERE id = ?", [TODO_IDS[w.id]!]);
      return;
    case "card": {
      const values = [cardID(w.id), w.uid, SCORES[w.score]!, w.flag ? 1 : 0];
      if (w.how === "replace")
        exec("REPLACE INTO card (id, uid, score, flag, label) VALUES (?, ?, ?, ?, NULL)", values);
      else
        exec(
          "INSERT INTO card (id, uid, score, flag) VALUES (?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET uid = excluded.uid, score = excluded.score, flag = excluded.flag",
          values,
        );
      return;
    }
    case "moveCard":
      if (w.from === w.to) return;
      exec("UPDATE OR REPLACE card SET id = ?, label = ? WHERE id = ?", [
        cardID(w.to),
        `from ${w.from}`,
        cardID(w.from),
      ]);
      return;
    case "bulk":
      for (let i = 0; i < w.count; i++) {
        exec("REPLACE INTO todo (id, owner, text, done, sort) VALUES (?, ?, 'b', 0, ?)", [
          `bulk${i}`,
          USERS[w.owner]!,
          i,
        ]);
      }
      return;
    case "deleteBulk":
      exec("DELETE FROM todo WHERE id LIKE 'bulk%'");
      return;
  }
}
