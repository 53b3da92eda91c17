import { fileURLToPath } from "node:url";
import { conformanceClaims, conformanceConfig, runHttpConvergence } from "@weir/conformance";
import { afterAll, beforeAll, describe, it } from "vitest";
import { memoryLogger, tempDir } from "../test/helpers.js";
import { createServer, credential, type WeirServer } from "./index.js";

// `pnpm test:soak`: the conformance suite's convergence workload over HTTP against a file-backed
// server, in workloads of 1,000 steps until WEIR_SOAK_OPERATIONS / 5 steps (default 20,000) ran;
// then as many against a server whose namespaces move between two workers and the overflow
// worker all the time (a step budget of 1 ms, a quiet time of 20 ms).
const steps = Math.ceil(Number(process.env.WEIR_SOAK_OPERATIONS ?? 100_000) / 5);
const firstSeed = Number(process.env.WEIR_SEED ?? Date.now() % 2 ** 31);

/** The workload against the server at `url`, 1,000 steps a seed. */
async function soak(url: string): Promise<void> {
  const target = { url, auth: (user: string) => user, close: async () => {} };
  for (let done = 0, seed = firstSeed; done < steps; done += 1_000, seed++) {
    await runHttpConvergence(target, { seed, operations: Math.min(1_000, steps - done) });
  }
}

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
    await soak(url);
  });
});

const WORKER_CONFIG = fileURLToPath(
  new URL("../test/fixtures/conformance-worker-config.mjs", import.meta.url),
);

describe("convergence over HTTP with namespaces moving between workers, soak", () => {
  let server: WeirServer;
  let url = "";
  const logger = memoryLogger();
  beforeAll(async () => {
    const dataDir = tempDir();
    server = createServer({
      ...conformanceConfig(),
      authenticate: (request) => conformanceClaims(credential(request)),
      dataDir,
      logger,
      workers: 2,
      workerConfig: { module: WORKER_CONFIG, argument: { storage: "file", dataDir } },
      stepBudgetMs: 1,
      overflowQuietMs: 20,
    });
    url = (await server.listen()).url;
  });
  afterAll(() => server.close());

  it(`holds over ${steps} steps (first seed ${firstSeed})`, { timeout: 3_600_000 }, async () => {
    await soak(url);
    const moves = logger.lines.filter((line) => String(line.msg).startsWith("namespace moved"));
    console.log(`${moves.length} moves`);
    if (moves.length === 0) throw new Error("no namespace moved: the soak did not test moves");
  });
});
