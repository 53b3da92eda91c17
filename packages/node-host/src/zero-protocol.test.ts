import { conformanceConfig, runZeroConformance } from "@weir/conformance";
import { memoryLogger } from "../test/helpers.js";
import { createServer } from "./index.js";

// The Zero dialect's raw-socket cases (shared with the edge host), over `ws` on a running server.
runZeroConformance("node-host", async () => {
  const server = createServer({
    ...conformanceConfig(),
    devAuth: true,
    storage: "memory",
    logger: memoryLogger(),
  });
  const { url } = await server.listen();
  return { url, auth: (userID) => userID, close: () => server.close() };
});
