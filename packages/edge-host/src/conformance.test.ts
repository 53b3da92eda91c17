import { type ConformanceTarget, runConformance } from "@weir/conformance";
import { startWorkerd, tempDir, type Workerd } from "../test/workerd.js";

runConformance("edge-host in workerd", async ({ upstreamUrl, appUrl }): Promise<ConformanceTarget> => {
  const persistDir = tempDir();
  const bindings = { UPSTREAM_URL: upstreamUrl, APP_URL: appUrl };
  let running: Workerd = await startWorkerd({ persistDir, bindings });
  return {
    get url() {
      return running.url;
    },
    auth: (userID) => userID,
    async restart() {
      await running.dispose();
      running = await startWorkerd({ persistDir, bindings });
    },
    close: () => running.dispose(),
  };
});
