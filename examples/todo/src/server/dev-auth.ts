import type { Claims } from "@weir/node-host";

/**
 * Development authentication: the credential is the user id, unverified. It comes from the
 * `Authorization` header, raw (as Replicache sends it) or after `Bearer `. A browser cannot set
 * headers on a WebSocket, so the wake socket alone may carry it as `?auth=` instead; that
 * socket only ever says `wake`, never data. Never use this in production.
 */
export function devAuthenticate(request: Request): Claims | null {
  const url = new URL(request.url);
  const header = request.headers.get("authorization")?.trim();
  const raw = header ?? (url.pathname.endsWith("/wake") ? url.searchParams.get("auth")?.trim() : undefined);
  const userID = raw?.replace(/^bearer\s+/i, "").trim();
  return userID && userID.length <= 256 ? { userID } : null;
}

export const DEV_AUTH_NOTICE =
  "weir: development authentication is on: the Authorization header is taken as the user id, " +
  "unverified. Never use this in production.";
