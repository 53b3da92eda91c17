// The Worker the tests run in workerd: the conformance app behind the sync Worker, a second
// object class whose alarm writes rows, and two routes that reach an object around the Worker.
import { conformanceClaims, conformanceConfig } from "@weir/conformance/config";
import { loadEngine } from "@weir/engine-wasm";
import engineModule from "@weir/engine-wasm/engine.wasm";
import { namespaceHash } from "@weir/host-core";
import { createSyncDurableObject, createSyncWorker, type EdgeConfig } from "../src/index.js";
import { createSyncDurableObject as createLeanSyncDurableObject } from "../src/lean.js";

interface Env {
  WEIR: DurableObjectNamespace;
  ALARMED: DurableObjectNamespace;
  PLAIN: DurableObjectNamespace;
  LEAN_QUERIES: DurableObjectNamespace;
  /** The conformance suite's upstream, when it runs one. */
  UPSTREAM_URL?: string;
  /** The conformance suite's app, which `dp-*` namespaces delegate pushes to. */
  APP_URL?: string;
  /** The sync objects' `pushSliceMs`, when set. */
  PUSH_SLICE_MS?: string;
  /** The sync objects' `maxSocketsPerUser`, when set. */
  MAX_SOCKETS_PER_USER?: string;
}

/**
 * The conformance credentials (the user id, or `<user>~admin`). `<user>~pad<n>` gives that
 * user's claims with an `n`-character note besides, for claims too large to keep in an attachment.
 */
function devAuthenticate(request: Request) {
  const token = request.headers
    .get("authorization")
    ?.replace(/^bearer\s+/i, "")
    .trim();
  // Refused as the Node host's development authentication refuses it: not a user id.
  if (!token || token.length > 256) return null;
  const [userID, pad] = token.split("~pad");
  return pad === undefined ? conformanceClaims(token) : { userID: userID!, note: "x".repeat(Number(pad)) };
}

const config: EdgeConfig<Env> = { ...conformanceConfig(), authenticate: devAuthenticate };
/** The conformance app, replicating the suite's upstream in `up-*` namespaces when it runs one. */
const syncConfig = (env: Env): EdgeConfig<Env> => {
  const chosen = env.UPSTREAM_URL
    ? {
        ...conformanceConfig({ upstreamUrl: env.UPSTREAM_URL, appUrl: env.APP_URL }),
        authenticate: devAuthenticate,
      }
    : config;
  return {
    ...chosen,
    ...(env.PUSH_SLICE_MS ? { pushSliceMs: Number(env.PUSH_SLICE_MS) } : {}),
    ...(env.MAX_SOCKETS_PER_USER ? { maxSocketsPerUser: Number(env.MAX_SOCKETS_PER_USER) } : {}),
  };
};
const BaseSyncObject = createSyncDurableObject(syncConfig);

/** The sync object, telling which instance it is (a new one after an eviction or hibernation). */
export class SyncObject extends BaseSyncObject {
  private readonly instance = crypto.randomUUID();

  constructor(
    private readonly state: DurableObjectState,
    env: Env,
  ) {
    super(state, env);
  }

  override fetch(request: Request): Promise<Response> {
    const path = new URL(request.url).pathname;
    if (path === "/__instance") return Promise.resolve(Response.json({ instance: this.instance }));
    // The tables of the object's database (the platform's own left out).
    if (path === "/__tables") {
      const tables = this.state.storage.sql
        .exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .toArray()
        .map((row) => row.name)
        .filter((name) => !name.startsWith("_cf_") && !name.startsWith("__miniflare"));
      return Promise.resolve(Response.json({ tables }));
    }
    return super.fetch(request);
  }
}

/**
 * An alarm task shaped like upstream polling: in namespaces named `ticks*` it writes a row per
 * run, three runs in all. A long wake window makes coalescing visible.
 */
const ALARM_RUNS = 3;
const alarmed: EdgeConfig<Env> = {
  ...config,
  binding: "ALARMED",
  basePath: "/alarmed",
  wakeWindowMs: 1_000,
  alarm: {
    firstDelayMs: 0,
    run({ namespace, write }) {
      if (!namespace.startsWith("ticks")) return null;
      const done = write((db) => {
        const written = Number(db.query("SELECT count(*) FROM todo WHERE owner = 'alarm'", [])[0]![0]);
        if (written < ALARM_RUNS) {
          db.exec("INSERT INTO todo (id, owner, text, done, sort) VALUES (?, 'alarm', 'tick', 0, ?)", [
            `tick-${written + 1}`,
            written + 1,
          ]);
        }
        return written;
      });
      if (done >= ALARM_RUNS) return null;
      // `ticks-slow` leaves time to restart workerd between runs.
      return namespace.startsWith("ticks-slow") ? 500 : 10;
    },
  },
};
export const AlarmedObject = createSyncDurableObject(alarmed);

/** The conformance app without its named queries: its objects load the lean engine. */
const plain: EdgeConfig<Env> = { ...config, queries: undefined, binding: "PLAIN", basePath: "/plain" };
export const PlainObject = createSyncDurableObject(plain);
/** The lean entry given a config that names queries: its objects refuse to start. */
const leanQueries: EdgeConfig<Env> = { ...config, binding: "LEAN_QUERIES", basePath: "/lean-queries" };
export const LeanQueriesObject = createLeanSyncDurableObject(leanQueries);

const sync = createSyncWorker(syncConfig);
const alarmedSync = createSyncWorker(alarmed);
const plainSync = createSyncWorker(plain);
const leanQueriesSync = createSyncWorker(leanQueries);

export default {
  async fetch(request: Request, env: Env, ctx: ExecutionContext): Promise<Response> {
    const url = new URL(request.url);
    const [, first, namespace, ...rest] = url.pathname.split("/");
    if (first === "alarmed") return alarmedSync.fetch(request, env, ctx);
    if (first === "plain") return plainSync.fetch(request, env, ctx);
    if (first === "lean-queries") return leanQueriesSync.fetch(request, env, ctx);
    // Straight to an object with no forwarded header, as a Worker that forgot it would.
    if (first === "__direct" && namespace) {
      url.pathname = `/${namespace}/${rest.join("/")}`;
      return env.WEIR.get(env.WEIR.idFromName(namespace)).fetch(new Request(url, request));
    }
    // To the object of `namespace`, for a path (and forwarded hash) of another namespace.
    if (first === "__misroute" && namespace) {
      const [other, ...tail] = rest;
      url.pathname = `/${other}/${tail.join("/")}`;
      const headers = new Headers(request.headers);
      const forwarded = { ns: await namespaceHash(other!), claims: { userID: "alice" } };
      headers.set("x-weir-forwarded", btoa(JSON.stringify(forwarded)).replace(/=+$/, ""));
      return env.WEIR.get(env.WEIR.idFromName(namespace)).fetch(
        new Request(url, { method: request.method, headers, body: request.body }),
      );
    }
    // Which instance of the namespace's object is running, and what its database holds.
    if ((first === "__instance" || first === "__tables") && namespace) {
      return env.WEIR.get(env.WEIR.idFromName(namespace)).fetch(new Request(`http://object/${first}`));
    }
    // An engine whose every call leaves its memory past the ceiling: each call replaces its instance.
    if (first === "__engine-renewal") {
      const engine = await loadEngine(engineModule, { memoryCeilingBytes: 1 });
      const none = { query: () => [], exec: () => 0 };
      for (let i = 0; i < 3; i++) {
        try {
          engine.state(none);
        } catch {
          // Not installed: answered by the engine, which is all this route needs of it.
        }
      }
      return Response.json({ renewals: engine.renewals, memoryBytes: engine.memoryBytes() });
    }
    return sync.fetch(request, env, ctx);
  },
};
