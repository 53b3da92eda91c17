import { safeEqual } from "@weir/protocol";
import type { WeirConfig } from "../config/weir-config.js";
import { HttpError } from "../http/http-error.js";
import type { AuthRequest } from "../http/http-parts.js";

/**
 * Lets an admin request through (the `x-admin-key` header matching `adminKey`, or the config's
 * own `isAdmin`), or throws: 403 when admin routes are closed or the caller is not an admin,
 * 401 when the key header is missing.
 */
export async function checkAdmin(
  config: Pick<WeirConfig, "adminKey" | "isAdmin">,
  request: AuthRequest,
): Promise<void> {
  const { adminKey, isAdmin } = config;
  const key = request.headers.get("x-admin-key");
  if (adminKey !== undefined && key !== null && safeEqual(key, adminKey)) return;
  if (isAdmin && (await isAdmin(request))) return;
  if (adminKey === undefined && !isAdmin) {
    throw new HttpError("forbidden", "admin routes are closed: configure adminKey or isAdmin");
  }
  if (key === null && !isAdmin)
    throw new HttpError("unauthorized", "admin routes need the x-admin-key header");
  throw new HttpError("forbidden", "not an admin");
}
