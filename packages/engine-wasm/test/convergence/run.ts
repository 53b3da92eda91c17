// A differential test of pulls: random writes by several users' clients (and by the host outside
// any push), pulls at random cookies under tiny caps, visibility toggles, prunes, invalidations
// and reopenings, checked against a model of the rows and their history. After every catch-up a
// client's copy must equal what its user may see (and what a fresh reset shows); at every pull,
// it may hold only row states its user could see at some point, it must respect its caps, and no
// mutation id may arrive before that mutation's effects.
import { expect } from "vitest";
import type { Engine } from "../../src/engine.js";
import { openSqlJs, type TestDatabase } from "../databases.js";
import { jsonBig, Model } from "./model.js";
import { type Action, convergenceSchema, filters, GROUPS, runWrite, USERS } from "./workload.js";

interface Copy {
  cookie: number | null;
  rows: Map<string, string>;
  lastMutationIDs: Map<string, number>;
}

type Patch = {
  op: string;
  tableName?: string;
  value?: Record<string, unknown>;
  id?: Record<string, unknown>;
};

/** Integers beyond 2^53 in a pull body, quoted so that JSON.parse keeps their digits. */
function parseBody(body: string): unknown {
  return JSON.parse(body.replace(/(?<=[:[,])(-?\d{16,})(?=[,}\]])/g, '"$1"'));
}

function patchKey(op: Patch): string {
  return `${op.tableName}:${String(op.op === "put" ? op.value!.id : op.id!.id)}`;
}

/**
 * Runs the actions against a fresh namespace on `open`'s driver and checks every invariant;
 * `reopen` restarts from a copy of the database (sql.js) or is a no-op.
 */
export function runConvergence(engine: Engine, open: () => TestDatabase, actions: Action[]): void {
  let db = open();
  db.transaction(() => engine.install(db.adapter, convergenceSchema));
  const model = new Model();
  const copies = GROUPS.map((): Copy => ({ cookie: null, rows: new Map(), lastMutationIDs: new Map() }));
  const nextID = new Map<string, number>();
  let fresh = 0;

  const visibility = (user: string) => (model.visibilityOn ? filters(user) : undefined);

  const pullOnce = (group: number, maxChangeRows?: number, maxChangeBytes?: number) => {
    const { id, user: userIndex } = GROUPS[group]!;
    const user = USERS[userIndex];
    const copy = copies[group]!;
    const result = db.transaction(() =>
      engine.pull(db.adapter, {
        clientGroupID: id,
        userID: user,
        cookie: copy.cookie,
        visibility: visibility(user),
        maxChangeRows,
        maxChangeBytes,
      }),
    );
    const body = parseBody(result.body) as {
      cookie: number;
      unchanged?: true;
      lastMutationIDChanges?: Record<string, number>;
      rowsPatch?: Patch[];
    };
    // Caps: an answer of more than one version stays within them (the first version is whole).
    const patch = body.rowsPatch ?? [];
    if (!body.unchanged && patch[0]?.op !== "clear" && patch.length > 0) {
      const versions = new Set(
        patch.map((op) => model.answeredAt(patchKey(op), copy.cookie as number, user)),
      );
      const inner = result.body.slice(result.body.indexOf('"rowsPatch":[') + 13, -2);
      const bytes = new TextEncoder().encode(inner).length - (patch.length - 1);
      if (
        versions.size > 1 &&
        (patch.length > (maxChangeRows ?? 10_000) || bytes > (maxChangeBytes ?? 2_000_000))
      )
        throw new Error(
          `group ${id}: an answer of ${versions.size} versions has ${patch.length} rows and ${bytes} bytes`,
        );
    }
    copy.cookie = body.cookie;
    if (body.unchanged) return true;
    for (const op of body.rowsPatch ?? []) {
      if (op.op === "clear") copy.rows.clear();
      else if (op.op === "put") copy.rows.set(patchKey(op), JSON.stringify(op.value));
      else copy.rows.delete(patchKey(op));
    }
    // Never a row state the user could not see.
    for (const [key, state] of copy.rows) {
      const seen = model.everSeen.get(`${user}|${key}`);
      if (!seen?.has(state))
        throw new Error(`group ${id} (user ${user}) holds ${key} as ${state}, never visible to it`);
    }
    // Never an id before its effects: each row a newly acknowledged mutation touched is at that
    // mutation's state or a later one (as the user sees it; absent when not visible).
    for (const [client, last] of Object.entries(body.lastMutationIDChanges ?? {})) {
      const before = copy.lastMutationIDs.get(client) ?? 0;
      copy.lastMutationIDs.set(client, last);
      for (const mutation of (model.mutations.get(client) ?? []).slice(before, last)) {
        for (const key of mutation.rows) {
          const held = copy.rows.get(key) ?? "absent";
          const states = model.history.get(key)!;
          const since: string[] = [];
          for (let i = states.length - 1; i >= 0; i--) {
            since.push(states[i]!.seenBy.has(user) ? states[i]!.state : "absent");
            if (states[i]!.version <= mutation.version) break;
          }
          if (!since.includes(held))
            throw new Error(`group ${id} learned mutation ${client}#${last} before its effect on ${key}`);
        }
      }
    }
    return false;
  };

  const catchUp = (group: number) => {
    for (let pulls = 0; pulls < 1000; pulls++) if (pullOnce(group, 2, 300)) return;
    throw new Error(`group ${GROUPS[group]!.id} never caught up`);
  };

  for (const [index, step] of actions.entries()) {
    try {
      if (step.kind === "mutate") {
        const group = GROUPS[step.group]!;
        const clientID = group.clients[step.client % group.clients.length]!;
        const mutationID = (nextID.get(clientID) ?? 0) + 1;
        db.transaction(() => {
          const ref = { clientGroupID: group.id, clientID, mutationID };
          engine.claimGroup(db.adapter, group.id, USERS[group.user]);
          expect(engine.preflight(db.adapter, ref).status).toBe("apply");
          for (const w of step.writes) runWrite(db, w);
          engine.finalize(db.adapter, ref);
        });
        nextID.set(clientID, mutationID);
        model.commit(step.writes, clientID);
      } else if (step.kind === "outside") {
        const { watermark, committed } = db.transaction(() => {
          for (const w of step.writes) runWrite(db, w);
          return engine.commit(db.adapter);
        });
        const touched = model.commit(step.writes);
        // A new version only when something changed.
        if (!committed) {
          expect(touched).toEqual([]);
          model.version--;
        }
        expect(watermark).toBe(model.version);
      } else if (step.kind === "pull") {
        pullOnce(step.group, step.maxRows, step.maxBytes);
      } else if (step.kind === "visibility") {
        // What a host does when the switch moves: every client resets once.
        db.transaction(() => engine.invalidate(db.adapter));
        model.bump(true);
      } else if (step.kind === "prune") {
        db.transaction(() => engine.prune(db.adapter, step.retain));
      } else if (step.kind === "invalidate") {
        db.transaction(() => engine.invalidate(db.adapter));
        model.bump();
      } else if (db.kind === "sql.js") {
        const image = (db as ReturnType<typeof openSqlJs>).export();
        db.close();
        db = openSqlJs(image);
        db.transaction(() => engine.install(db.adapter, convergenceSchema));
      }
    } catch (error) {
      throw new Error(
        `action ${index} (${JSON.stringify(step, jsonBig)}) failed: ${(error as Error).message}`,
        {
          cause: error,
        },
      );
    }
    if (index % 50 === 49) checkCaughtUp();
  }
  checkCaughtUp();
  db.close();

  function checkCaughtUp() {
    for (let group = 0; group < GROUPS.length; group++) {
      catchUp(group);
      const { user: userIndex, clients } = GROUPS[group]!;
      const user = USERS[userIndex];
      const copy = copies[group]!;
      const expected = model.visibleRows(user);
      expect(new Map([...copy.rows].sort())).toEqual(new Map([...expected].sort()));
      // A fresh client group of the same user sees the same.
      const reset = parseBody(
        db.transaction(() =>
          engine.pull(db.adapter, {
            clientGroupID: `fresh-${fresh++}`,
            userID: user,
            cookie: null,
            visibility: visibility(user),
          }),
        ).body,
      ) as { rowsPatch: Patch[] };
      const resetRows = new Map(
        reset.rowsPatch.slice(1).map((op) => [patchKey(op), JSON.stringify(op.value)] as const),
      );
      expect(new Map([...resetRows].sort())).toEqual(new Map([...expected].sort()));
      for (const client of clients)
        expect(copy.lastMutationIDs.get(client) ?? 0).toBe(nextID.get(client) ?? 0);
    }
  }
}
