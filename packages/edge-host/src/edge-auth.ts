import { type Claims, HttpError, type Logger, type WeirConfig } from "@weir/host-core";
import { MAX_FORWARDED_BYTES } from "./forwarded-request.js";

const MAX_USER_ID = 256;
const BEARER = { "www-authenticate": "Bearer" };

/**
 * The claims `authenticate` answers, as plain JSON (what can cross to the object), or the 401.
 * An app that answers claims JSON cannot carry, or too large to forward, gets a 500: a bug to fix.
 */
export async function authenticateAtEdge(
  config: WeirConfig,
  request: Request,
  logger: Logger,
): Promise<Claims> {
  let claims: Claims | null;
  try {
    claims = await config.authenticate(request);
  } catch (error) {
    logger.log("warn", { msg: "authenticate threw", error: String(error) });
    throw new HttpError("unauthorized", "authentication failed", BEARER);
  }
  if (claims === null || claims === undefined) {
    throw new HttpError("unauthorized", "missing or invalid credentials", BEARER);
  }
  const userID = (claims as { userID?: unknown }).userID;
  if (typeof userID !== "string" || userID.length === 0 || userID.length > MAX_USER_ID) {
    throw new Error("authenticate answered claims without a userID string of 1 to 256 characters");
  }
  const text = JSON.stringify(claims);
  if (text.length > MAX_FORWARDED_BYTES) {
    throw new Error(
      `authenticate answered claims of ${text.length} characters; at most ${MAX_FORWARDED_BYTES} travel`,
    );
  }
  return JSON.parse(text) as Claims;
}
