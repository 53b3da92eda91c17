import { fileURLToPath } from "node:url";
import { conformanceClaims, conformanceConfig, runZeroConformance } from "@weir/conformance";
import { memoryLogger, tempDir } from "../test/helpers.js";
import { createServer, credential, type NodeHostOptions, type WeirServer } from "./index.js";

const WORKER_CONFIG = fileURLToPath(
  new URL("../test/fixtures/conformance-worker-config.mjs", import.meta.url),
);

/** A server whose data is in files, so that cases can restart it. */
function zeroTarget(workers: Pick<NodeHostOptions, "workers" | "workerConfig" | "stepBudgetMs">) {
  return async () => {
    const dataDir = tempDir();
    const start = async () => {
      const server = createServer({
        ...conformanceConfig(),
        authenticate: (request) => conformanceClaims(credential(request)),
        dataDir,
        logger: memoryLogger(),
        ...workers,
        ...(workers.workerConfig
          ? { workerConfig: { ...workers.workerConfig, argument: { storage: "file", dataDir } } }
          : {}),
      });
      const { url } = await server.listen();
      return { server, url };
    };
    let running: { server: WeirServer; url: string } = await start();
    return {
      get url() {
        return running.url;
      },
      auth: (userID: string) => userID,
      async restart() {
        await running.server.close();
        running = await start();
      },
      close: () => running.server.close(),
    };
  };
}

// The Zero dialect's raw-socket cases (shared with the edge host), over `ws` on a running server.
runZeroConformance("node-host", zeroTarget({}));

// The same with the namespaces in two worker threads: every frame is relayed by the routing thread.
// No namespace moves to the overflow worker: on a busy machine two slow steps would move one and
// close its socket mid-case (overflow-worker.test.ts covers moves, and the reconnect they ask for).
runZeroConformance(
  "node-host, 2 workers",
  zeroTarget({ workers: 2, workerConfig: { module: WORKER_CONFIG }, stepBudgetMs: 0 }),
);
