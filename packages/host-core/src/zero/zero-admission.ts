// Admitting a client's messages: each is charged to its user's quota, and desired queries must
// name queries the server knows.
import type { ZeroQueryOp, ZeroTransformErrorBody } from "@weir/protocol";
import type { ZeroConnection } from "./zero-connection.js";
import { ZeroError } from "./zero-error.js";
import type { ZeroMessageCost, ZeroMeter } from "./zero-meter.js";
import type { ZeroNamespace } from "./zero-namespace.js";

/**
 * Charges a message to the connection's user. Over budget, a push is refused as Zero's own
 * rate limit does it (`MutationRateLimited`: the connection stays, the client pushes its
 * mutations again later), and a change of queries with `ServerOverloaded`, whose backoff the
 * client waits out before it reconnects and sends the change again.
 */
export function chargeMessage(meter: ZeroMeter, connection: ZeroConnection, cost: ZeroMessageCost): boolean {
  try {
    meter(connection.claims.userID, cost);
    return true;
  } catch (error) {
    if ((error as { code?: unknown }).code !== "rate_limited") throw error;
    const message = (error as Error).message;
    if (cost.kind === "push") {
      connection.send(["error", { kind: "MutationRateLimited", message, origin: "zeroCache" }]);
      return false;
    }
    const seconds = Number((error as { headers?: Record<string, string> }).headers?.["retry-after"] ?? 1);
    throw new ZeroError("ServerOverloaded", message, {
      kind: "ServerOverloaded",
      origin: "zeroCache",
      minBackoffMs: seconds * 1000,
    });
  }
}

/**
 * The changes of desired queries the server can answer: a put must name a query of the config's
 * (`transformError` tells the client of each other one, which is dropped).
 */
export function admitQueries(
  queries: ZeroNamespace["queries"],
  connection: ZeroConnection,
  ops: readonly ZeroQueryOp[],
): ZeroQueryOp[] {
  const accepted: ZeroQueryOp[] = [];
  const refused: ZeroTransformErrorBody = [];
  for (const op of ops) {
    if (op.op !== "put") {
      accepted.push(op);
      continue;
    }
    if (op.name === undefined) {
      refused.push({
        error: "parse",
        id: op.hash,
        name: "",
        message: "this server answers named queries only",
      });
    } else if (!queries || !Object.hasOwn(queries, op.name)) {
      refused.push({ error: "app", id: op.hash, name: op.name, message: `unknown query ${op.name}` });
    } else {
      accepted.push(op);
    }
  }
  if (refused.length > 0) connection.send(["transformError", refused]);
  return accepted;
}
