// The Zero todo app on the edge host, as test/edge-workerd.ts runs it in workerd: the same server
// config as on Node, a Worker in front and one SQLite Durable Object per namespace.
import { createSyncDurableObject, createSyncWorker, type EdgeConfig } from "@weir/edge-host";
import { zeroTodoServer } from "../src/zero-config.js";

interface Env {
  WEIR: {
    idFromName(name: string): unknown;
    get(id: unknown): { fetch(request: Request): Promise<Response> };
  };
}

const config: EdgeConfig<Env> = {
  ...zeroTodoServer,
  /** Development authentication, as node-host's devAuth: the client's `auth` is the user id. */
  authenticate(request) {
    const userID = request.headers
      .get("authorization")
      ?.replace(/^bearer\s+/i, "")
      .trim();
    return userID ? { userID } : null;
  },
  // The stock client's keepalive is answered without waking the object, so it can hibernate.
  autoResponse: "zero",
};

const BaseSyncObject = createSyncDurableObject(config);

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

const sync = createSyncWorker(config);

export default {
  fetch(request: Request, env: Env, ctx: Parameters<typeof sync.fetch>[2]): Promise<Response> {
    const [, first, namespace] = new URL(request.url).pathname.split("/");
    if (first === "__instance" && namespace) {
      return env.WEIR.get(env.WEIR.idFromName(namespace)).fetch(new Request("http://object/__instance"));
    }
    return sync.fetch(request, env, ctx);
  },
};
