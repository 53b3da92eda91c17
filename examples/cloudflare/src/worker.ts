import {
  type Claims,
  createSyncDurableObject,
  createSyncWorker,
  type EdgeConfig,
  httpUpstream,
} from "@weir/edge-host/lean";
// The very schema and mutators of the Node todo example, so either server serves its browser app.
import { mutators } from "@weir/example-todo/mutators";
import { todoSchema } from "@weir/example-todo/schema";

interface Env {
  WEIR: DurableObjectNamespace;
  /** `wrangler secret put ADMIN_KEY` opens the admin routes. */
  ADMIN_KEY?: string;
  /**
   * With PostgreSQL as the system of record: where `weir upstream postgres` serves the upstream
   * contract (a var), or a service binding to it (`UPSTREAM`, which wins), and its bearer token.
   */
  UPSTREAM_URL?: string;
  UPSTREAM?: Fetcher;
  UPSTREAM_TOKEN?: string;
  /** The token the upstream sends with `POST /<ns>/notify` after each commit. */
  NOTIFY_TOKEN?: string;
}

/**
 * Each namespace replicates its tenant's rows from the upstream when one is configured. A
 * binding reaches the upstream's Worker or tunnel without leaving Cloudflare's network; its URL
 * still names the path, so the namespace goes after whatever host it carries.
 */
function upstreamOf(env: Env): EdgeConfig<Env>["upstream"] {
  const base = env.UPSTREAM_URL ?? (env.UPSTREAM ? "https://upstream" : undefined);
  if (base === undefined) return undefined;
  const binding = env.UPSTREAM;
  return {
    source: (namespace) =>
      httpUpstream({
        url: `${base.replace(/\/$/, "")}/${namespace}`,
        ...(env.UPSTREAM_TOKEN ? { token: env.UPSTREAM_TOKEN } : {}),
        ...(binding ? { fetch: (url, init) => binding.fetch(url, init) } : {}),
      }),
    ...(env.NOTIFY_TOKEN ? { notifyToken: env.NOTIFY_TOKEN } : {}),
  };
}

/**
 * Development authentication, as in the Node example: the credential is the user id, unverified,
 * from the Authorization header (or `?auth=` on the wake socket, which browsers cannot give
 * headers). Replace it with a JWT check before real users arrive.
 */
function devAuthenticate(request: Request): Claims | null {
  const url = new URL(request.url);
  const header = request.headers.get("authorization")?.trim();
  const raw = header ?? (url.pathname.endsWith("/wake") ? url.searchParams.get("auth")?.trim() : undefined);
  const userID = raw?.replace(/^bearer\s+/i, "").trim();
  return userID && userID.length <= 256 ? { userID } : null;
}

const config = (env: Env): EdgeConfig<Env> => {
  const upstream = upstreamOf(env);
  return {
    schema: todoSchema,
    mutators,
    visibility: (claims) => ({ todo: { sql: "owner = ?", params: [claims.userID] } }),
    authenticate: devAuthenticate,
    ...(env.ADMIN_KEY ? { adminKey: env.ADMIN_KEY } : {}),
    ...(upstream ? { upstream } : {}),
  };
};

export const SyncObject = createSyncDurableObject(config);
export default createSyncWorker(config);
