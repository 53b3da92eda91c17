import { runZeroConformance } from "@weir/conformance";
import { startWorkerd, tempDir, type Workerd } from "../test/workerd.js";

// The Zero dialect's raw-socket cases (shared with the Node host), through the Worker to the
// namespace's Durable Object in workerd, which keeps its data so that cases can restart it.
runZeroConformance("edge-host in workerd", async () => {
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
