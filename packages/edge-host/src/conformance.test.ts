import { type ConformanceTarget, runConformance } from "@weir/conformance";
import { startWorkerd, tempDir, type Workerd } from "../test/workerd.js";

runConformance("edge-host in workerd", async (): Promise<ConformanceTarget> => {
  const persistDir = tempDir();
  let running: Workerd = await startWorkerd({ persistDir });
  return {
    get url() {
      return running.url;
    },
    auth: (userID) => userID,
    async restart() {
      await running.dispose();
      running = await startWorkerd({ persistDir });
    },
    close: () => running.dispose(),
  };
});
