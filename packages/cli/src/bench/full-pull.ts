import { performance } from "node:perf_hooks";
import type { BenchContext } from "./bench-context.js";
import { round } from "./latency-recorder.js";
import { ProgressLine } from "./progress-line.js";

export interface FullPullResult {
  mode: "full-pull";
  repeat: number;
  /** Rows in each answer (the same every time unless someone wrote meanwhile). */
  rows: number;
  /** Median over the repeats. */
  rowsPerSec: number;
  bestRowsPerSec: number;
  timesMs: number[];
}

/**
 * A new client's first pull (null cookie): the whole visible table in one answer, parsed as a
 * client would. Repeated with a new client group each time; the median rate is the figure.
 */
export async function runFullPull(ctx: BenchContext): Promise<FullPullResult> {
  const target = ctx.target();
  const timesMs: number[] = [];
  const rates: number[] = [];
  let rows = 0;
  let done = 0;
  const progress = new ProgressLine(
    ctx.progressStream,
    () => `full pull  ${done}/${ctx.options.repeat}  ${rows.toLocaleString("en-US")} rows`,
  ).start();
  try {
    for (let i = 0; i < ctx.options.repeat; i++) {
      const started = performance.now();
      const answer = await target.pull(`${ctx.runID}-full${i}`, `${ctx.runID}-full${i}`, null);
      const ms = performance.now() - started;
      rows = answer.puts;
      timesMs.push(round(ms));
      rates.push(answer.puts / (ms / 1000));
      done++;
    }
  } finally {
    progress.stop();
    await target.close();
  }
  const sorted = [...rates].sort((a, b) => a - b);
  return {
    mode: "full-pull",
    repeat: ctx.options.repeat,
    rows,
    rowsPerSec: round(sorted[Math.floor((sorted.length - 1) / 2)] ?? 0, 1),
    bestRowsPerSec: round(sorted[sorted.length - 1] ?? 0, 1),
    timesMs,
  };
}
