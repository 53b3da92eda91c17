import fc from "fast-check";
import { describe, it } from "vitest";
import { runConvergence } from "../test/convergence/run.js";
import { workload } from "../test/convergence/workload.js";
import { DATABASES, testEngine } from "../test/databases.js";

// `pnpm test:soak`: workloads of 500 actions each until WEIR_SOAK_OPERATIONS actions (default
// 100,000) ran on each driver, checked as the convergence test checks its short ones. A failure
// names its workload's seed, which WEIR_SEED replays.
const operations = Number(process.env.WEIR_SOAK_OPERATIONS ?? 100_000);
const WORKLOAD = 500;
const firstSeed = Number(process.env.WEIR_SEED ?? Date.now() % 2 ** 31);

describe.each(DATABASES)("convergence soak on $kind", ({ open }) => {
  it(`holds over ${operations} actions`, { timeout: 3_600_000 }, async () => {
    const engine = await testEngine();
    const workloads = Math.ceil(operations / WORKLOAD);
    for (let i = 0; i < workloads; i++) {
      const seed = (firstSeed + i) % 2 ** 31;
      const [actions] = fc.sample(workload({ minLength: WORKLOAD, maxLength: WORKLOAD }), {
        numRuns: 1,
        seed,
      });
      try {
        runConvergence(engine, open, actions!);
      } catch (error) {
        throw new Error(
          `workload ${i} failed; replay with WEIR_SEED=${seed} WEIR_SOAK_OPERATIONS=${WORKLOAD}`,
          {
            cause: error,
          },
        );
      }
    }
  });
});
