import { conformanceConfig, runHttpConvergence } from "@weir/conformance";
import { afterAll, beforeAll, describe, it } from "vitest";
import { memoryLogger, tempDir } from "../test/helpers.js";
import { createServer, type WeirServer } from "./index.js";

// `pnpm test:soak`: the conformance suite's convergence workload over HTTP against a file-backed
// server, in workloads of 1,000 steps until WEIR_SOAK_OPERATIONS / 5 steps (default 20,000) ran.
const steps = Math.ceil(Number(process.env.WEIR_SOAK_OPERATIONS ?? 100_000) / 5);
const firstSeed = Number(process.env.WEIR_SEED ?? Date.now() % 2 ** 31);

describe("convergence over HTTP, soak", () => {
  let server: WeirServer;
  let url = "";
  beforeAll(async () => {
    server = createServer({
      ...conformanceConfig(),
      devAuth: true,
      dataDir: tempDir(),
      logger: memoryLogger(),
    });
    url = (await server.listen()).url;
  });
  afterAll(() => server.close());

  it(`holds over ${steps} steps (first seed ${firstSeed})`, { timeout: 3_600_000 }, async () => {
    const target = { url, auth: (user: string) => user, close: async () => {} };
    for (let done = 0, seed = firstSeed; done < steps; done += 1_000, seed++) {
      await runHttpConvergence(target, { seed, operations: Math.min(1_000, steps - done) });
    }
  });
});
