import { performance } from "node:perf_hooks";
import type { BenchContext } from "./bench-context.js";
import { round } from "./latency-recorder.js";
import { ProgressLine } from "./progress-line.js";

export interface SeedResult {
  mode: "seed";
  rows: number;
  mutations: number;
  seconds: number;
}

const ROWS_PER_MUTATION = 1_000;

/**
 * Writes `rows` new rows through the seed mutator (`{ prefix, start, count }`, a thousand rows
 * per mutation, `mutationsPerPush` mutations per push) so that a full pull has a known size.
 */
export async function runSeed(ctx: BenchContext): Promise<SeedResult> {
  const { rows, seedMutator, mutationsPerPush } = ctx.options;
  const target = ctx.target();
  const clientID = `${ctx.runID}-seed`;
  let written = 0;
  let nextID = 1;
  const progress = new ProgressLine(
    ctx.progressStream,
    () => `seed  ${written.toLocaleString("en-US")}/${rows.toLocaleString("en-US")} rows`,
  ).start();
  const started = performance.now();
  try {
    while (written < rows) {
      const mutations = [];
      let batchRows = 0;
      while (mutations.length < mutationsPerPush && written + batchRows < rows) {
        const count = Math.min(ROWS_PER_MUTATION, rows - written - batchRows);
        mutations.push({
          clientID,
          id: nextID++,
          name: seedMutator,
          args: { prefix: `${ctx.runID}-seed`, start: written + batchRows, count },
        });
        batchRows += count;
      }
      await target.push(`${ctx.runID}-seedgroup`, mutations);
      written += batchRows;
    }
  } finally {
    progress.stop();
    await target.close();
  }
  return {
    mode: "seed",
    rows: written,
    mutations: nextID - 1,
    seconds: round((performance.now() - started) / 1000),
  };
}
