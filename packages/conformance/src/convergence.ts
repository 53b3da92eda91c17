import {
  CONFORMANCE_ADMIN_KEY,
  CONFORMANCE_CARD_SCORES,
  CONFORMANCE_MAX_CHANGE_ROWS,
} from "./conformance-config.js";
import { admin, freshNamespace, NativeClient } from "./http-client.js";
import type { ConformanceTarget } from "./target.js";

// A differential test over HTTP: seeded random pushes by several users' client groups (every
// writing mutator of the conformance app: raw SQL, REPLACE, moves between owners, bulk writes
// beyond the pull cap, refusals), single pulls at whatever cookie a group holds, visibility
// switches, retention changes and invalidations. At every checkpoint each group pulls until
// `unchanged` and must hold exactly what a new group of its user gets; after every pull, a group
// may hold only rows its user may see (unless the switch let it see everything since its reset).

const USERS = ["1", "2", "3"] as const;
const GROUP_USERS = [0, 0, 1, 2];
const TODOS = ["t0", "t1", "t2"];
const CARDS = [1, 2, 3];
const SCORES = [0.1 + 0.2, 1 / 3, 0.3, 0.5];

/** A small seeded generator (mulberry32), so a failing run replays from its seed. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Row = Record<string, unknown>;

function visibleTo(user: string, table: string, row: Row): boolean {
  if (table === "todo") return row.owner === user;
  if (table === "card") {
    const score = CONFORMANCE_CARD_SCORES[user];
    return (
      String(row.uid) === user || (row.flag === true && score !== undefined && row.score === Number(score))
    );
  }
  return true;
}

export interface ConvergenceOptions {
  seed: number;
  operations: number;
  /** Every how many operations all groups catch up and are compared with a fresh pull. */
  checkEvery?: number;
}

/** Runs one seeded workload in a new namespace; throws naming the seed and the step on failure. */
export async function runHttpConvergence(
  target: ConformanceTarget,
  options: ConvergenceOptions,
): Promise<void> {
  const { seed, operations, checkEvery = 100 } = options;
  const next = random(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
  const ns = freshNamespace("conv");
  const groups = GROUP_USERS.map((user) => ({
    client: new NativeClient(target, ns, USERS[user]!),
    user: USERS[user]!,
    unfiltered: false,
  }));
  let visibilityOn = true;
  // Swarm testing: each workload leaves some kinds of step out, so the rest happen densely.
  const enabled = (share: number) => next() < share;
  const profile = {
    bulk: enabled(0.5),
    cards: enabled(0.7),
    switches: enabled(0.4),
    retention: enabled(0.4),
    pullWeight: 1 + Math.floor(next() * 4),
  };

  const mutation = (user: string) => {
    const choices: Array<() => { name: string; args: unknown }> = [
      () => ({
        name: "setTodo",
        args: {
          id: pick(TODOS),
          owner: pick(USERS),
          text: pick(["", "a", "bc"]),
          how: pick(["upsert", "replace"]),
        },
      }),
      () => ({ name: "removeTodo", args: { id: pick(TODOS) } }),
      () => ({ name: "updateTodo", args: { id: pick(TODOS), text: "mine", done: next() < 0.5 } }),
      () => ({ name: "createTodo", args: { id: pick(TODOS), text: user } }),
    ];
    if (profile.cards) {
      choices.push(
        () => ({
          name: "putCard",
          args: {
            id: pick(CARDS),
            uid: 1 + Math.floor(next() * 3),
            score: pick(SCORES),
            flag: next() < 0.5,
            how: pick(["upsert", "replace"]),
          },
        }),
        () => ({ name: "moveCard", args: { from: pick(CARDS), to: pick(CARDS) } }),
      );
    }
    if (profile.bulk) {
      choices.push(
        () => ({
          name: "bulkReplace",
          args: {
            prefix: "bk",
            count: 1 + Math.floor(next() * (CONFORMANCE_MAX_CHANGE_ROWS + 10)),
            owner: pick(USERS),
          },
        }),
        () => ({ name: "removeTodo", args: { prefix: "bk" } }),
      );
    }
    return pick(choices)();
  };

  const pullOnce = async (group: (typeof groups)[number]) => {
    const answer = await group.client.pull();
    if (answer.status !== 200)
      throw new Error(`pull answered ${answer.status}: ${JSON.stringify(answer.json)}`);
    const reset = answer.json.rowsPatch?.[0]?.op === "clear";
    group.client.apply(answer.json);
    if (!visibilityOn) group.unfiltered = true;
    else if (reset) group.unfiltered = false;
    if (group.unfiltered || !visibilityOn) return answer;
    for (const [key, row] of group.client.rows) {
      const table = key.slice(0, key.indexOf(":"));
      if (!visibleTo(group.user, table, row))
        throw new Error(`user ${group.user} holds ${key} = ${JSON.stringify(row)}, which it may not see`);
    }
    return answer;
  };

  const checkpoint = async () => {
    for (const group of groups) {
      for (let pulls = 0; ; pulls++) {
        if (pulls > 500) throw new Error("a group never caught up");
        if ((await pullOnce(group)).json.unchanged) break;
      }
      const fresh = new NativeClient(target, ns, group.user);
      await fresh.sync();
      const held = JSON.stringify([...group.client.rows].sort());
      const expected = JSON.stringify([...fresh.rows].sort());
      if (held !== expected)
        throw new Error(`user ${group.user} holds ${held}\nbut a fresh pull shows ${expected}`);
    }
  };

  for (let step = 0; step < operations; step++) {
    try {
      const roll = next() * (6 + profile.pullWeight + 1);
      if (roll < 6) {
        const group = pick(groups);
        const count = 1 + Math.floor(next() * 3);
        const pushed = await group.client.push(Array.from({ length: count }, () => mutation(group.user)));
        if (pushed.status !== 200)
          throw new Error(`push answered ${pushed.status}: ${JSON.stringify(pushed.json)}`);
      } else if (roll < 6 + profile.pullWeight) {
        await pullOnce(pick(groups));
      } else if (profile.switches && next() < 0.5) {
        visibilityOn = !visibilityOn;
        await admin(target, ns, "visibility", CONFORMANCE_ADMIN_KEY, { enabled: visibilityOn });
      } else if (profile.retention && next() < 0.7) {
        await admin(target, ns, "retention", CONFORMANCE_ADMIN_KEY, {
          retainChanges: 3 + Math.floor(next() * 30),
        });
      } else {
        await admin(target, ns, "invalidate", CONFORMANCE_ADMIN_KEY, {});
      }
      if (step % checkEvery === checkEvery - 1) await checkpoint();
    } catch (error) {
      throw new Error(
        `convergence over HTTP failed at step ${step} of seed ${seed}: ${(error as Error).message}`,
        {
          cause: error,
        },
      );
    }
  }
  await checkpoint();
}
