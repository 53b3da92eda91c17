import { runZeroConformance } from "@weir/conformance";
import { startWorkerd } from "../test/workerd.js";

// The Zero dialect's raw-socket cases (shared with the Node host), through the Worker to the
// namespace's Durable Object in workerd.
runZeroConformance("edge-host in workerd", async () => {
  const running = await startWorkerd();
  return { url: running.url, auth: (userID) => userID, close: () => running.dispose() };
});
