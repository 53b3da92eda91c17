import { MAX_ID_LENGTH } from "@weir/protocol";
import type { ResolvedConfig, WeirConfig } from "../config/weir-config.js";
import { HttpError } from "../http/http-error.js";
import type { AuthRequest } from "../http/http-parts.js";
import type { Logger } from "../ports/logger.js";
import { type Claims, isUserID } from "./claims.js";

/** The request's claims by the config's `authenticate`; a promise only when it answers one. */
export function authenticateRequest(
  config: Pick<WeirConfig, "authenticate">,
  logger: Logger,
  request: AuthRequest,
): Claims | Promise<Claims> {
  let answer: Claims | null | Promise<Claims | null>;
  try {
    answer = config.authenticate(request);
  } catch (error) {
    throw authenticateThrew(logger, error);
  }
  if (typeof (answer as PromiseLike<unknown> | null)?.then === "function") {
    return Promise.resolve(answer).then(
      (claims) => checkedClaims(claims),
      (error: unknown) => {
        throw authenticateThrew(logger, error);
      },
    );
  }
  return checkedClaims(answer as Claims | null);
}

function authenticateThrew(logger: Logger, error: unknown): HttpError {
  logger.log("warn", { msg: "authenticate threw", error: String(error) });
  return new HttpError("unauthorized", "authentication failed", { "www-authenticate": "Bearer" });
}

function checkedClaims(claims: Claims | null | undefined): Claims {
  if (claims === null || claims === undefined) {
    throw new HttpError("unauthorized", "missing or invalid credentials", { "www-authenticate": "Bearer" });
  }
  if (!isUserID(claims.userID)) {
    throw new Error(
      `authenticate answered claims without a userID string of 1 to ${MAX_ID_LENGTH} characters`,
    );
  }
  return claims;
}

/** Whether the claims may use the namespace, by the config's `authorizeNamespace` (403 if not). */
export function authorizeNamespace(
  config: ResolvedConfig,
  claims: Claims,
  namespace: string,
): void | Promise<void> {
  if (!config.authorizeNamespace) return;
  const check = (allowed: boolean) => {
    if (allowed !== true) throw new HttpError("forbidden", "these credentials may not use this namespace");
  };
  const answer = config.authorizeNamespace(claims, namespace);
  if (typeof answer === "boolean") return check(answer);
  return Promise.resolve(answer).then(check);
}
