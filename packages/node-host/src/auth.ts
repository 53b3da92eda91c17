import { type AuthRequest, type Claims, isUserID, type Logger } from "@weir/host-core";
import { createRemoteJWKSet, type JWTPayload, type JWTVerifyGetKey, jwtVerify } from "jose";

export type JwtOptions =
  | { secret: string; issuer?: string; audience?: string }
  | { jwksUrl: string; issuer?: string; audience?: string };

/**
 * The credential of a request: its `Authorization` header, raw (as Replicache sends it) or after
 * `Bearer `. A browser cannot set headers on a WebSocket, so the wake socket (and only it: it
 * carries no data) may send the credential as `?auth=` instead.
 */
export function credential(request: AuthRequest): string | null {
  const header = request.headers.get("authorization")?.trim() || wakeCredential(request);
  if (!header) return null;
  const match = /^bearer\s+(.+)$/i.exec(header);
  return (match ? match[1]! : header).trim() || null;
}

function wakeCredential(request: AuthRequest): string | undefined {
  if (request.method !== "GET") return undefined;
  const url = new URL(request.url);
  return url.pathname.endsWith("/wake") ? url.searchParams.get("auth")?.trim() : undefined;
}

/**
 * Verifies a JWT (HS256 with a shared secret, or any key of a JWKS URL) and answers its claims,
 * with `userID` taken from `sub` (or a `userID` claim).
 */
export function jwtAuthenticator(
  options: JwtOptions,
  logger: Logger,
): (request: Request) => Promise<Claims | null> {
  const key: Uint8Array | JWTVerifyGetKey =
    "secret" in options
      ? new TextEncoder().encode(options.secret)
      : createRemoteJWKSet(new URL(options.jwksUrl));
  const verifyOptions = {
    ...("secret" in options ? { algorithms: ["HS256"] } : {}),
    ...(options.issuer ? { issuer: options.issuer } : {}),
    ...(options.audience ? { audience: options.audience } : {}),
  };
  return async (request) => {
    const token = credential(request);
    if (!token) return null;
    let payload: JWTPayload;
    try {
      payload = (
        key instanceof Uint8Array
          ? await jwtVerify(token, key, verifyOptions)
          : await jwtVerify(token, key, verifyOptions)
      ).payload;
    } catch (error) {
      logger.log("info", { msg: "jwt refused", reason: (error as { code?: string }).code ?? String(error) });
      return null;
    }
    const userID = typeof payload.sub === "string" ? payload.sub : payload.userID;
    if (!isUserID(userID)) return null;
    return { ...payload, userID };
  };
}

/** Development only: the Authorization header is the user id, unverified. */
export function devAuthenticator(): (request: Request) => Claims | null {
  return (request) => {
    const userID = credential(request);
    return isUserID(userID) ? { userID } : null;
  };
}
