import { type ConformanceTarget, conformanceConfig, runConformance } from "@weir/conformance";
import type { SqlValue } from "@weir/engine-wasm";
import { memoryLogger, tempDir } from "../test/helpers.js";
import { createServer, type WeirServer } from "./index.js";

for (const storage of ["file", "memory"] as const) {
  runConformance(
    `node-host, ${storage} storage`,
    async ({ upstreamUrl, appUrl }): Promise<ConformanceTarget> => {
      const effects: Array<{ name: string; id: string }> = [];
      const dataDir = tempDir();
      const start = async () => {
        const server = createServer({
          ...conformanceConfig({ onEffect: (effect) => effects.push(effect), upstreamUrl, appUrl }),
          devAuth: true,
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
