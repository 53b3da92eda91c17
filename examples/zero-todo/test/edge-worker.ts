// The Zero todo app on the edge host, as test/edge-workerd.ts runs it in workerd: the same server
// config as on Node, a Worker in front and one SQLite Durable Object per namespace.
import { conformanceConfig } from "@weir/conformance/config";
import { createSyncDurableObject, createSyncWorker, type EdgeConfig } from "@weir/edge-host";
import { serverQueries } from "../src/server-queries.js";
import { zeroTodoServer } from "../src/zero-config.js";

interface Env {
  WEIR: {
    idFromName(name: string): unknown;
    get(id: unknown): { fetch(request: Request): Promise<Response> };
  };
  /** The conformance suite's upstream and app, when a test runs them (see syncConfig). */
  UPSTREAM_URL?: string;
  APP_URL?: string;
}

/** Development authentication, as node-host's devAuth: the client's `auth` is the user id. */
function authenticate(request: Request) {
  const userID = request.headers
    .get("authorization")
    ?.replace(/^bearer\s+/i, "")
    .trim();
  return userID ? { userID } : null;
}

const config: EdgeConfig<Env> = {
  ...zeroTodoServer,
  authenticate,
  // As the Node host in the stock client's tests (zero-client-suite.ts, TEST_MAX_BODY_BYTES).
  maxBodyBytes: 1024 * 1024,
  // The stock client's keepalive is answered without waking the object, so it can hibernate.
  autoResponse: "zero",
};

/**
 * With the conformance suite's app and upstream bound, the suite's config instead: namespaces
 * named `dp-*` delegate their pushes to the app and replicate its database (the delegated tests).
 */
const syncConfig = (env: Env): EdgeConfig<Env> =>
  env.APP_URL
    ? {
        ...conformanceConfig({ upstreamUrl: env.UPSTREAM_URL, appUrl: env.APP_URL }),
        queries: serverQueries,
        authenticate,
        autoResponse: "zero",
      }
    : config;

const BaseSyncObject = createSyncDurableObject(syncConfig);

/** The sync object, telling which instance it is (a new one after hibernation or an eviction). */
export class SyncObject extends BaseSyncObject {
  private readonly instance = crypto.randomUUID();

  override fetch(request: Request): Promise<Response> {
    if (new URL(request.url).pathname === "/__instance") {
      return Promise.resolve(Response.json({ instance: this.instance }));
    }
    return super.fetch(request);
  }
}

const sync = createSyncWorker(syncConfig);

export default {
  fetch(request: Request, env: Env, ctx: Parameters<typeof sync.fetch>[2]): Promise<Response> {
    const [, first, namespace] = new URL(request.url).pathname.split("/");
    if (first === "__instance" && namespace) {
      return env.WEIR.get(env.WEIR.idFromName(namespace)).fetch(new Request("http://object/__instance"));
    }
    return sync.fetch(request, env, ctx);
  },
};
