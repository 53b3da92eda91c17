import type { BenchContext } from "./bench-context.js";
import { type LatencySummary, round } from "./latency-recorder.js";
import { ProgressLine } from "./progress-line.js";
import { TimedLoop } from "./timed-loop.js";

export interface PushLoadResult {
  mode: "push";
  clients: number;
  mutationsPerPush: number;
  durationSec: number;
  pushes: number;
  mutations: number;
  errors: number;
  firstError?: string;
  pushesPerSec: number;
  mutationsPerSec: number;
  latency: LatencySummary;
}

/**
 * N clients, each in its own client group, push batches of M one-row mutations as fast as the
 * server answers. Each mutation writes one new row through the `mutator` with the args
 * `--args` makes of its row id and number (by default `{ id, value }`).
 */
export async function runPushLoad(ctx: BenchContext): Promise<PushLoadResult> {
  const { clients, mutationsPerPush, mutator, args } = ctx.options;
  const targets = Array.from({ length: clients }, (_, index) => ctx.target(index));
  const nextID = new Array<number>(clients).fill(1);
  const loop = new TimedLoop({
    workers: clients,
    warmupMs: ctx.options.warmupSec * 1000,
    durationMs: ctx.options.durationSec * 1000,
    step: async (worker) => {
      const clientID = `${ctx.runID}-c${worker}`;
      const first = nextID[worker]!;
      const mutations = Array.from({ length: mutationsPerPush }, (_, i) => ({
        clientID,
        id: first + i,
        name: mutator,
        args: args(`${clientID}-${first + i}`, first + i),
      }));
      await targets[worker]!.push(`${ctx.runID}-g${worker}`, mutations);
      // Only an acknowledged push moves on; after a failure the same ids are sent again.
      nextID[worker] = first + mutationsPerPush;
      return mutationsPerPush;
    },
  });
  const progress = new ProgressLine(ctx.progressStream, () => {
    const seconds = loop.windowSeconds;
    if (seconds < 0) return `push  warming up (${(-seconds).toFixed(1)}s)`;
    const s = loop.stats;
    return `push  ${seconds.toFixed(1)}s  ${Math.round(s.units / Math.max(seconds, 0.001)).toLocaleString("en-US")} mutations/s  p99 ${round(s.latency.percentile(99))} ms  errors ${s.errors}`;
  }).start();
  try {
    const stats = await loop.run();
    const seconds = stats.elapsedMs / 1000;
    return {
      mode: "push",
      clients,
      mutationsPerPush,
      durationSec: round(seconds),
      pushes: stats.operations,
      mutations: stats.units,
      errors: stats.errors,
      ...(stats.firstError ? { firstError: stats.firstError } : {}),
      pushesPerSec: round(stats.operations / seconds, 1),
      mutationsPerSec: round(stats.units / seconds, 1),
      latency: stats.latency.summary(),
    };
  } finally {
    progress.stop();
    await Promise.all(targets.map((t) => t.close()));
  }
}
