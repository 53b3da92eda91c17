// The issue tracker of the whereExists cases (test/issues-app.ts) on the edge host, as
// test/edge-workerd.ts runs it in workerd: the same server config as on Node.
import { createSyncDurableObject, createSyncWorker, type EdgeConfig } from "@weir/edge-host";
import { issueServer } from "./issues-app.js";

interface Env {
  WEIR: {
    idFromName(name: string): unknown;
    get(id: unknown): { fetch(request: Request): Promise<Response> };
  };
}

/** Development authentication, as node-host's devAuth: the client's `auth` is the user id. */
function authenticate(request: Request) {
  const userID = request.headers
    .get("authorization")
    ?.replace(/^bearer\s+/i, "")
    .trim();
  return userID ? { userID } : null;
}

const config: EdgeConfig<Env> = { ...issueServer, authenticate, autoResponse: "zero" };

export const SyncObject = createSyncDurableObject(config);

export default createSyncWorker(config);
