import type { Dialect } from "./dialect.js";
import { MAX_MUTATIONS_PER_PUSH } from "./limits.js";
import { parse } from "./parse.js";
import type { PushBatch } from "./push-batch.js";
import { PushRequest, SUPPORTED_PUSH_VERSION } from "./push-request.js";
import { ReplicachePushRequest } from "./replicache-push-request.js";
import { UnsupportedVersionError, WireError } from "./wire-error.js";

/**
 * Validates a push body of either dialect and brings it to one shape. A batch past the protocol's
 * cap is refused as too large (`payload_too_large`) before any of it is validated, so the client
 * knows to split it rather than fix it.
 */
export function parsePushRequest(body: unknown, dialect: Dialect): PushBatch {
  const count = mutationCount(body);
  if (count > MAX_MUTATIONS_PER_PUSH) {
    throw new WireError(
      "payload_too_large",
      `a push holds at most ${MAX_MUTATIONS_PER_PUSH} mutations (this one has ${count}); send the rest in another push`,
    );
  }
  const result = dialect === "replicache" ? parse(ReplicachePushRequest, body) : parse(PushRequest, body);
  if (!result.ok) throw new WireError("bad_request", result.message);
  if (result.value.pushVersion !== SUPPORTED_PUSH_VERSION) throw new UnsupportedVersionError("push");
  return {
    clientGroupID: result.value.clientGroupID,
    mutations: result.value.mutations.map(({ clientID, id, name, args, timestamp }) => ({
      clientID,
      id,
      name,
      // A native mutation carries its argument as the one element of `args`.
      args: dialect === "replicache" ? args : (args as unknown[])[0],
      timestamp,
    })),
  };
}

function mutationCount(body: unknown): number {
  const mutations = (body as { mutations?: unknown } | null)?.mutations;
  return Array.isArray(mutations) ? mutations.length : 0;
}
