import { readFileSync, rmSync } from "node:fs";
import { MAX_MUTATIONS_PER_PUSH } from "@weir/protocol";
import { expect, it } from "vitest";
import WebSocket from "ws";
import { startChildServer } from "../test/child-server.js";
import { tempDir } from "../test/helpers.js";

/** How long the load runs (WEIR_SOAK_SECONDS, default three minutes). */
const SECONDS = Number(process.env.WEIR_SOAK_SECONDS ?? 180);
/** Past the warm-up, the server's resident memory may not rise more than this above it. */
const GROWTH_LIMIT_MB = 150;
/** Memory is sampled from this share of the run on (the start warms caches and the engine). */
const WARM_UP_SHARE = 0.2;
const PUSHERS = 4;
const PULLERS = 4;
const SOCKETS = 200;
const USERS = ["ann", "ben", "cat", "dan"];
/** One push in this many is of the largest batch (10,000 mutations). */
const LARGE_EVERY = 20;

function rssMB(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return Number(match?.[1]) / 1024;
}

async function post(
  url: string,
  user: string,
  body: unknown,
): Promise<{ status: number; json: { cookie?: number } }> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: user },
    body: JSON.stringify(body),
  });
  return { status: response.status, json: await response.json() };
}

it(`keeps its memory bounded under ${SECONDS} s of mixed load and namespace churn`, {
  timeout: (SECONDS + 120) * 1000,
}, async () => {
  const dataDir = tempDir("weir-soak-");
  const server = await startChildServer(dataDir, "todo-server.mjs", {
    // Namespaces close soon after use and at most 32 stay open: the churn opens and closes files all along.
    WEIR_IDLE_CLOSE_MS: "2000",
    WEIR_MAX_OPEN: "32",
    WEIR_QUOTAS: JSON.stringify({ requestUnits: null, newNamespacesPerDay: null }),
  });
  const pid = server.child.pid!;
  const deadline = Date.now() + SECONDS * 1000;
  const statuses = new Map<number, number>();
  const count = (status: number) => statuses.set(status, (statuses.get(status) ?? 0) + 1);
  const samples: Array<{ at: number; mb: number }> = [];
  const sampler = setInterval(() => samples.push({ at: Date.now(), mb: rssMB(pid) }), 1_000);
  let churn = 0;

  // Each pusher writes to a namespace of its own, and moves to a new one after each large batch,
  // so the load stays the same all along (no table keeps growing, making resets ever larger).
  const generations = Array.from({ length: PUSHERS }, () => 0);
  const pushed = (index: number) => `soak-${index}-${generations[index]}`;

  const pusher = async (index: number) => {
    const user = USERS[index % USERS.length]!;
    const clientID = `pusher-${index}`;
    let next = 1;
    for (let round = 0; Date.now() < deadline; round++) {
      // A batch queued offline now and then; otherwise a few mutations at a time.
      const large = round % LARGE_EVERY === LARGE_EVERY - 1;
      const size = large ? MAX_MUTATIONS_PER_PUSH : 1 + (round % 20);
      const mutations = Array.from({ length: size }, (_, i) => ({
        type: "custom",
        id: next + i,
        clientID,
        name: "createTodo",
        args: [{ id: `${clientID}-${next + i}`, text: "soak" }],
      }));
      const answer = await post(`${server.url}/${pushed(index)}/push`, user, {
        clientGroupID: `g-${clientID}`,
        pushVersion: 1,
        mutations,
      });
      count(answer.status);
      if (answer.status === 200) next += size;
      if (large) {
        generations[index]!++;
        next = 1;
      }
    }
  };

  const puller = async (index: number) => {
    const user = USERS[index % USERS.length]!;
    const cookies = new Map<string, number>();
    for (let round = 0; Date.now() < deadline; round++) {
      const ns = pushed(round % PUSHERS);
      // Pulls since the last cookie of each namespace, and a reset now and then.
      const answer = await post(`${server.url}/${ns}/pull`, user, {
        clientGroupID: `pg-${index}-${ns}`,
        clientID: `puller-${index}`,
        cookie: round % 10 === 0 ? null : (cookies.get(ns) ?? null),
      });
      count(answer.status);
      if (answer.status === 200 && answer.json.cookie !== undefined) cookies.set(ns, answer.json.cookie);
      // New namespaces all along, each used once: they are created, closed idle, or pushed out by the cap.
      const fresh = await post(`${server.url}/churn-${index}-${churn++}/pull`, user, {
        clientGroupID: "g",
        clientID: "c",
        cookie: null,
      });
      count(fresh.status);
    }
  };

  const sockets = async () => {
    const open = new Set<WebSocket>();
    for (let round = 0; Date.now() < deadline; round++) {
      while (open.size < SOCKETS) {
        const ws = new WebSocket(
          `${server.url.replace("http", "ws")}/${pushed(round % PUSHERS)}/wake?clientID=w${round}-${open.size}`,
          {
            headers: { authorization: USERS[round % USERS.length]! },
          },
        );
        ws.on("error", () => {});
        open.add(ws);
      }
      // Some go away abruptly, as tabs do.
      for (const ws of [...open].slice(0, 20)) {
        ws.terminate();
        open.delete(ws);
      }
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    for (const ws of open) ws.terminate();
  };

  try {
    await Promise.all([
      ...Array.from({ length: PUSHERS }, (_, i) => pusher(i)),
      ...Array.from({ length: PULLERS }, (_, i) => puller(i)),
      sockets(),
    ]);
  } finally {
    clearInterval(sampler);
    server.child.kill("SIGTERM");
    await server.exited;
    rmSync(dataDir, { recursive: true, force: true });
  }

  const start = samples[0]!.at;
  const warmedAt = start + SECONDS * 1000 * WARM_UP_SHARE;
  const warm = samples.filter((sample) => sample.at <= warmedAt);
  const after = samples.filter((sample) => sample.at > warmedAt);
  const baseline = Math.max(...warm.map((sample) => sample.mb));
  const peak = Math.max(...after.map((sample) => sample.mb));
  const summary = {
    seconds: SECONDS,
    statuses: Object.fromEntries(statuses),
    namespacesCreated: churn,
    warmUpPeakMB: Math.round(baseline),
    peakMB: Math.round(peak),
    lastMB: Math.round(samples.at(-1)!.mb),
  };
  console.log(`soak: ${JSON.stringify(summary)}`);
  console.log(
    `soak: RSS MB every 10 s: ${samples
      .filter((_, i) => i % 10 === 0)
      .map((s) => Math.round(s.mb))
      .join(" ")}`,
  );
  expect([...statuses.keys()].filter((status) => status >= 500)).toEqual([]);
  expect(statuses.get(200)).toBeGreaterThan(0);
  expect(peak - baseline).toBeLessThan(GROWTH_LIMIT_MB);
});
