// The Zero todo app on the edge host, as test/edge-workerd.ts runs it in workerd: the same server
// config as on Node, a Worker in front and one SQLite Durable Object per namespace.
import { createSyncDurableObject, createSyncWorker, type EdgeConfig } from "@weir/edge-host";
import { zeroTodoServer } from "../src/zero-config.js";

/** Development authentication, as node-host's devAuth: the client's `auth` is the user id. */
const config: EdgeConfig = {
  ...zeroTodoServer,
  authenticate(request) {
    const userID = request.headers
      .get("authorization")
      ?.replace(/^bearer\s+/i, "")
      .trim();
    return userID ? { userID } : null;
  },
};

export const SyncObject = createSyncDurableObject(config);
export default createSyncWorker(config);
