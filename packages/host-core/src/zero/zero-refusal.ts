import { ZeroError } from "./zero-error.js";

/**
 * A refusal of the HTTP flows as the Zero error the client acts on (others are rethrown): a
 * refused credential is Unauthorized, a quota or an unavailable server ServerOverloaded, whose
 * Retry-After the client waits out before it connects again.
 */
export function zeroRefusal(error: unknown): ZeroError {
  const status = (error as { status?: unknown }).status;
  const message = error instanceof Error ? error.message : String(error);
  if (status === 401 || status === 403) return new ZeroError("Unauthorized", message);
  if (status === 429 || status === 503) {
    const retryAfter = Number((error as { headers?: Record<string, string> }).headers?.["retry-after"]);
    return new ZeroError(
      "ServerOverloaded",
      message,
      Number.isFinite(retryAfter) && retryAfter > 0
        ? { kind: "ServerOverloaded", origin: "zeroCache", minBackoffMs: retryAfter * 1000 }
        : undefined,
    );
  }
  if (typeof status === "number" && status < 500) return new ZeroError("InvalidConnectionRequest", message);
  throw error;
}
