import fc from "fast-check";
import { describe, it } from "vitest";
import { runConvergence } from "../test/convergence/run.js";
import { workload } from "../test/convergence/workload.js";
import { DATABASES, testEngine } from "../test/databases.js";

// fast-check prints the seed and the shrunk actions of a failing run; WEIR_SEED replays a seed.
describe.each(DATABASES)("convergence on $kind", ({ open }) => {
  it("every copy converges to exactly what its user may see, and never holds what it may not", async () => {
    const engine = await testEngine();
    const seed = process.env.WEIR_SEED === undefined ? undefined : Number(process.env.WEIR_SEED);
    fc.assert(
      fc.property(workload({ minLength: 40, maxLength: 120 }), (actions) => {
        runConvergence(engine, open, actions);
      }),
      { numRuns: 40, ...(seed === undefined ? {} : { seed }) },
    );
  });
});
