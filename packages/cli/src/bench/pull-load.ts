import type { BenchContext } from "./bench-context.js";
import { type LatencySummary, round } from "./latency-recorder.js";
import { ProgressLine } from "./progress-line.js";
import { TimedLoop } from "./timed-loop.js";

export interface PullLoadResult {
  mode: "pull";
  clients: number;
  durationSec: number;
  pulls: number;
  /** Answers that carried changes (someone wrote during the run); they still count as pulls. */
  changed: number;
  errors: number;
  firstError?: string;
  pullsPerSec: number;
  latency: LatencySummary;
}

/**
 * Caught-up pulls: N clients, each in its own client group, pull with the current cookie in a
 * closed loop. One full pull first learns that cookie.
 */
export async function runPullLoad(ctx: BenchContext): Promise<PullLoadResult> {
  const { clients } = ctx.options;
  const targets = Array.from({ length: clients }, (_, index) => ctx.target(index));
  const first = await targets[0]!.pull(`${ctx.runID}-start`, `${ctx.runID}-start`, null);
  const cookies = new Array<unknown>(clients).fill(first.cookie);
  let changed = 0;
  const loop = new TimedLoop({
    workers: clients,
    warmupMs: ctx.options.warmupSec * 1000,
    durationMs: ctx.options.durationSec * 1000,
    step: async (worker) => {
      const answer = await targets[worker]!.pull(
        `${ctx.runID}-g${worker}`,
        `${ctx.runID}-c${worker}`,
        cookies[worker],
      );
      if (!answer.caughtUp) changed++;
      cookies[worker] = answer.cookie;
      return 1;
    },
  });
  const progress = new ProgressLine(ctx.progressStream, () => {
    const seconds = loop.windowSeconds;
    if (seconds < 0) return `pull  warming up (${(-seconds).toFixed(1)}s)`;
    const s = loop.stats;
    return `pull  ${seconds.toFixed(1)}s  ${Math.round(s.operations / Math.max(seconds, 0.001)).toLocaleString("en-US")} pulls/s  p99 ${round(s.latency.percentile(99))} ms  errors ${s.errors}`;
  }).start();
  try {
    const stats = await loop.run();
    const seconds = stats.elapsedMs / 1000;
    return {
      mode: "pull",
      clients,
      durationSec: round(seconds),
      pulls: stats.operations,
      changed,
      errors: stats.errors,
      ...(stats.firstError ? { firstError: stats.firstError } : {}),
      pullsPerSec: round(stats.operations / seconds, 1),
      latency: stats.latency.summary(),
    };
  } finally {
    progress.stop();
    await Promise.all(targets.map((t) => t.close()));
  }
}
