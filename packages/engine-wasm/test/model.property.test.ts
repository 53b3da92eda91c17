import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DATABASES, openSqlJs, testEngine } from "./databases.js";
import { Namespace, ownerFilter, todoSchema } from "./fixtures.js";

// A model of the server and of each client group's local copy. Random mutations by several
// users and clients, pulls with random caps, prunes, invalidations and reopenings; after each
// pull the copy must never claim a mutation whose effects it lacks, and once caught up it must
// hold exactly the rows its user may see.

const USERS = ["alice", "bob"] as const;
const GROUPS = [
  { id: "ga1", user: "alice", clients: ["a1", "a2"] },
  { id: "ga2", user: "alice", clients: ["a3"] },
  { id: "gb1", user: "bob", clients: ["b1"] },
] as const;
const ROW_IDS = ["r0", "r1", "r2", "r3", "r4"];

type Row = { id: string; owner: string; text: string; done: boolean; sort: number };
type Action =
  | {
      kind: "write";
      group: number;
      client: number;
      row: string;
      op: "upsert" | "delete";
      owner: number;
      text: string;
    }
  | { kind: "pull"; group: number; maxRows: number; maxBytes: number }
  | { kind: "prune"; retain: number }
  | { kind: "invalidate" }
  | { kind: "reopen" };

const action: fc.Arbitrary<Action> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant("write" as const),
      group: fc.nat(GROUPS.length - 1),
      client: fc.nat(1),
      row: fc.constantFrom(...ROW_IDS),
      op: fc.constantFrom("upsert" as const, "delete" as const),
      owner: fc.nat(USERS.length - 1),
      text: fc.string({ maxLength: 6 }),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("pull" as const),
      group: fc.nat(GROUPS.length - 1),
      maxRows: fc.integer({ min: 1, max: 4 }),
      maxBytes: fc.constantFrom(1, 200, 2_000_000),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("prune" as const), retain: fc.nat(4) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("invalidate" as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("reopen" as const) }) },
);

interface Copy {
  cookie: number | null;
  rows: Map<string, Row>;
  lastMutationIDs: Map<string, number>;
}

class Model {
  version = 0;
  rows = new Map<string, Row>();
  /** Per row, its states by version (undefined = absent). */
  history = new Map<string, { version: number; row: Row | undefined }[]>();
  /** The version each client's mutation committed at, and the rows it touched. */
  mutations = new Map<string, { version: number; rows: string[] }[]>();

  commit(clientID: string, touched: string[]): void {
    this.version++;
    for (const id of touched) {
      const states = this.history.get(id) ?? [];
      states.push({ version: this.version, row: this.rows.get(id) });
      this.history.set(id, states);
    }
    const list = this.mutations.get(clientID) ?? [];
    list.push({ version: this.version, rows: touched });
    this.mutations.set(clientID, list);
  }

  visible(user: string): Map<string, Row> {
    return new Map([...this.rows].filter(([, row]) => row.owner === user));
  }

  /** The row as `user` would see it at every version from `from` on. */
  statesSince(id: string, from: number, user: string): (Row | undefined)[] {
    const states = this.history.get(id) ?? [];
    const seen = (row: Row | undefined) => (row && row.owner === user ? row : undefined);
    let current: Row | undefined;
    const result: (Row | undefined)[] = [];
    for (const state of states) {
      if (state.version <= from) current = state.row;
      else result.push(seen(state.row));
    }
    return [seen(current), ...result];
  }
}

function applyPull(
  copy: Copy,
  body: {
    cookie: number;
    unchanged?: true;
    lastMutationIDChanges?: Record<string, number>;
    rowsPatch?: { op: string; value?: Record<string, unknown>; id?: Record<string, unknown> }[];
  },
): void {
  copy.cookie = body.cookie;
  if (body.unchanged) return;
  for (const op of body.rowsPatch ?? []) {
    if (op.op === "clear") copy.rows.clear();
    else if (op.op === "put") copy.rows.set(String(op.value!.id), op.value as unknown as Row);
    else copy.rows.delete(String(op.id!.id));
  }
  for (const [client, id] of Object.entries(body.lastMutationIDChanges ?? {}))
    copy.lastMutationIDs.set(client, id);
}

describe.each(DATABASES)("model-based sync on $kind", ({ kind, open }) => {
  it("every copy converges to exactly what its user may see, and ids never run ahead", async () => {
    const engine = await testEngine();
    await fc.assert(
      fc.asyncProperty(fc.array(action, { minLength: 1, maxLength: 40 }), async (actions) => {
        let db = open();
        let ns = new Namespace(engine, db, todoSchema);
        const model = new Model();
        const copies = GROUPS.map(
          (): Copy => ({ cookie: null, rows: new Map(), lastMutationIDs: new Map() }),
        );
        const nextID = new Map<string, number>();

        const pull = (group: number, maxChangeRows?: number, maxChangeBytes?: number) => {
          const { id, user } = GROUPS[group]!;
          const copy = copies[group]!;
          const result = ns.pull({
            clientGroupID: id,
            userID: user,
            cookie: copy.cookie,
            visibility: ownerFilter(user),
            maxChangeRows,
            maxChangeBytes,
          });
          applyPull(copy, result.json);
          // Ids never run ahead: every row a reported mutation touched is at that mutation's
          // state or a later one.
          for (const [client, last] of copy.lastMutationIDs) {
            const done = (model.mutations.get(client) ?? []).slice(0, last);
            for (const mutation of done) {
              for (const rowID of mutation.rows) {
                const held = copy.rows.get(rowID);
                const states = model.statesSince(rowID, mutation.version, user);
                expect(states).toContainEqual(held);
              }
            }
          }
          return result;
        };

        for (const step of actions) {
          if (step.kind === "write") {
            const group = GROUPS[step.group]!;
            const clientID = group.clients[step.client % group.clients.length]!;
            const mutationID = (nextID.get(clientID) ?? 0) + 1;
            nextID.set(clientID, mutationID);
            const row: Row = {
              id: step.row,
              owner: USERS[step.owner]!,
              text: step.text,
              done: step.text.length % 2 === 1,
              sort: step.text.length / 3,
            };
            ns.mutate(group.id, clientID, (run) => {
              if (step.op === "delete") run("DELETE FROM todo WHERE id = ?", [step.row]);
              else
                run(
                  "INSERT INTO todo (id, owner, text, done, sort) VALUES (?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET owner = excluded.owner, text = excluded.text, done = excluded.done, sort = excluded.sort",
                  [row.id, row.owner, row.text, row.done ? 1 : 0, row.sort],
                );
            });
            if (step.op === "delete") model.rows.delete(step.row);
            else model.rows.set(step.row, row);
            model.commit(clientID, [step.row]);
          } else if (step.kind === "pull") {
            pull(step.group, step.maxRows, step.maxBytes);
          } else if (step.kind === "prune") {
            db.transaction(() => engine.prune(db.adapter, step.retain));
          } else if (step.kind === "invalidate") {
            db.transaction(() => engine.invalidate(db.adapter));
            model.version++;
          } else if (kind === "sql.js") {
            const image = (db as ReturnType<typeof openSqlJs>).export();
            db.close();
            db = openSqlJs(image);
            const counters = ns.nextID;
            ns = new Namespace(engine, db, todoSchema);
            ns.nextID = counters;
          }
        }

        for (let group = 0; group < GROUPS.length; group++) {
          for (let pulls = 0; pulls < 100; pulls++) {
            if (pull(group, 2).unchanged) break;
          }
          const { user, clients } = GROUPS[group]!;
          const copy = copies[group]!;
          expect(new Map([...copy.rows].sort())).toEqual(new Map([...model.visible(user)].sort()));
          for (const client of clients) {
            expect(copy.lastMutationIDs.get(client) ?? 0).toBe(nextID.get(client) ?? 0);
          }
        }
        db.close();
      }),
      { numRuns: 60 },
    );
  });
});
