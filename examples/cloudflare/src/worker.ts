import { type Claims, createSyncDurableObject, createSyncWorker, type EdgeConfig } from "@weir/edge-host";
import { mutators } from "./mutators.js";
import { todoSchema } from "./schema.js";

interface Env {
  WEIR: DurableObjectNamespace;
  /** `wrangler secret put ADMIN_KEY` opens the admin routes. */
  ADMIN_KEY?: string;
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

const config = (env: Env): EdgeConfig<Env> => ({
  schema: todoSchema,
  mutators,
  visibility: (claims) => ({ todo: { sql: "owner = ?", params: [claims.userID] } }),
  authenticate: devAuthenticate,
  ...(env.ADMIN_KEY ? { adminKey: env.ADMIN_KEY } : {}),
});

export const SyncObject = createSyncDurableObject(config);
export default createSyncWorker(config);
