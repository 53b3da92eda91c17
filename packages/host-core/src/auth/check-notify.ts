import { safeEqual } from "@weir/protocol";
import type { WeirConfig } from "../config/weir-config.js";
import { HttpError } from "../http/http-error.js";
import type { AuthRequest } from "../http/http-parts.js";
import type { UpstreamConfig } from "../ingest/upstream-config.js";
import { checkAdmin } from "./check-admin.js";

/**
 * Lets a notify through: `Authorization: Bearer <upstream.notifyToken>`, the config's own
 * `upstream.authorizeNotify`, or else the admin check. Throws 404 when the config has no upstream
 * (the route does not exist), 401 or 403 otherwise.
 */
export async function checkNotify(
  config: Pick<WeirConfig, "adminKey" | "isAdmin"> & {
    upstream?: Pick<UpstreamConfig, "notifyToken" | "authorizeNotify"> | null;
  },
  request: AuthRequest,
  namespace: string,
): Promise<void> {
  const upstream = config.upstream;
  if (!upstream) throw new HttpError("not_found", "this server has no upstream: notify does nothing here");
  const header = request.headers.get("authorization");
  const token = header?.startsWith("Bearer ") ? header.slice("Bearer ".length) : null;
  if (upstream.notifyToken !== undefined && token !== null && safeEqual(token, upstream.notifyToken)) return;
  if (upstream.authorizeNotify && (await upstream.authorizeNotify(request, namespace))) return;
  if (request.headers.get("x-admin-key") === null) {
    if (token !== null) throw new HttpError("forbidden", "not the notify token");
    if (upstream.notifyToken !== undefined)
      throw new HttpError("unauthorized", "notify needs `Authorization: Bearer <notify token>`");
  }
  await checkAdmin(config, request);
}
