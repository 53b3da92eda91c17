import { conformanceConfig, runZeroConformance } from "@weir/conformance";
import { memoryLogger, tempDir } from "../test/helpers.js";
import { createServer, type WeirServer } from "./index.js";

// The Zero dialect's raw-socket cases (shared with the edge host), over `ws` on a running server
// that keeps its data in files, so that cases can restart it.
runZeroConformance("node-host", async () => {
  const dataDir = tempDir();
  const start = async () => {
    const server = createServer({ ...conformanceConfig(), devAuth: true, dataDir, logger: memoryLogger() });
    const { url } = await server.listen();
    return { server, url };
  };
  let running: { server: WeirServer; url: string } = await start();
  return {
    get url() {
      return running.url;
    },
    auth: (userID) => userID,
    async restart() {
      await running.server.close();
      running = await start();
    },
    close: () => running.server.close(),
  };
});
