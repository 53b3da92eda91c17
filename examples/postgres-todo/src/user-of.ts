import { isUserID } from "@weir/host-core";

/**
 * The user a credential names, with development authentication as weir's server runs it: the
 * `Authorization` header, raw or after `Bearer `, is the user id, unverified. weir passes the
 * caller's header on with each push it forwards, so the app checks the user itself (with real
 * authentication, this is where the app verifies the token).
 */
export function userOf(authorization: string | null): string | null {
  const header = authorization?.trim();
  if (!header) return null;
  const match = /^bearer\s+(.+)$/i.exec(header);
  const userID = (match ? match[1]! : header).trim();
  return isUserID(userID) ? userID : null;
}
