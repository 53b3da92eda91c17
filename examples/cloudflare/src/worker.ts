import { type Claims, createSyncDurableObject, createSyncWorker, type EdgeConfig } from "@weir/edge-host";
// The very schema and mutators of the Node todo example, so either server serves its browser app.
import { mutators } from "@weir/example-todo/mutators";
import { todoSchema } from "@weir/example-todo/schema";

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
