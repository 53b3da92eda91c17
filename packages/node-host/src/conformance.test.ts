import { fileURLToPath } from "node:url";
import {
  type ConformanceTarget,
  conformanceClaims,
  conformanceConfig,
  runConformance,
} from "@weir/conformance";
import type { SqlValue } from "@weir/engine-wasm";
import { memoryLogger, tempDir } from "../test/helpers.js";
import { createServer, credential, type WeirServer } from "./index.js";

const WORKER_CONFIG = fileURLToPath(
  new URL("../test/fixtures/conformance-worker-config.mjs", import.meta.url),
);

for (const storage of ["file", "memory"] as const) {
  runConformance(
    `node-host, ${storage} storage`,
    async ({ upstreamUrl, appUrl }): Promise<ConformanceTarget> => {
      const effects: Array<{ name: string; id: string }> = [];
      const dataDir = tempDir();
      const start = async () => {
        const server = createServer({
          ...conformanceConfig({ onEffect: (effect) => effects.push(effect), upstreamUrl, appUrl }),
          authenticate: (request) => conformanceClaims(credential(request)),
          storage,
          dataDir,
          logger: memoryLogger(),
        });
        const { url } = await server.listen();
        return { server, url };
      };
      let running: { server: WeirServer; url: string } = await start();
      return {
        get url() {
          return running.url;
        },
        auth: (userID) => userID,
        effects: () => effects,
        async writeOutsidePush(namespace, sql, params) {
          const service = await running.server.host!.namespace(namespace);
          service.write((db) => db.exec(sql, params as SqlValue[]));
        },
        ...(storage === "file"
          ? {
              async restart() {
                await running.server.close();
                running = await start();
              },
            }
          : {}),
        close: () => running.server.close(),
      };
    },
    { writesOutsidePush: true },
  );
}

// With worker threads: the namespaces run in two workers, this thread routes requests and keeps
// the sockets. Effects and outside writes happen in the workers, out of the suite's reach. The
// last run has a step budget of 1 ms and a quiet time of 20 ms: nearly every step moves its
// namespace to the overflow worker or back, and every case must hold all the same.
for (const [storage, moving] of [
  ["file", false],
  ["memory", false],
  ["file", true],
] as const) {
  const name = `node-host, ${storage} storage, 2 workers${moving ? ", namespaces moving between workers" : ""}`;
  runConformance(name, async ({ upstreamUrl, appUrl }) => {
    const dataDir = tempDir();
    const start = async () => {
      const server = createServer({
        ...conformanceConfig({ upstreamUrl, appUrl }),
        authenticate: (request) => conformanceClaims(credential(request)),
        storage,
        dataDir,
        logger: memoryLogger(),
        workers: 2,
        workerConfig: { module: WORKER_CONFIG, argument: { upstreamUrl, appUrl, storage, dataDir } },
        ...(moving ? { stepBudgetMs: 1, overflowQuietMs: 20 } : {}),
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
      ...(storage === "file"
        ? {
            async restart() {
              await running.server.close();
              running = await start();
            },
          }
        : {}),
      close: () => running.server.close(),
    };
  });
}
