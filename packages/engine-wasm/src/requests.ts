import {
  MAX_MUTATIONS_PER_PUSH,
  PullRequest,
  PushRequest,
  parse,
  ReplicachePullRequest,
  ReplicachePushRequest,
  SUPPORTED_PULL_VERSION,
  SUPPORTED_PUSH_VERSION,
} from "@weir/protocol";
import { EngineError } from "./engine-error.js";
import type { Dialect, PushBatch } from "./types.js";

/** A version the server does not speak; hosts answer it in the dialect's own shape. */
export class UnsupportedVersionError extends EngineError {
  constructor(readonly versionType: "pull" | "push") {
    super(400, "bad_request", `unsupported ${versionType} version`);
  }
}

export interface ParsedPull {
  clientGroupID: string;
  clientID?: string;
  cookie: number | null;
}

function invalid(message: string): EngineError {
  return new EngineError(400, "bad_request", message);
}

/** Validates a pull body of either dialect. */
export function parsePullRequest(body: unknown, dialect: Dialect): ParsedPull {
  if (dialect === "replicache") {
    const result = parse(ReplicachePullRequest, body);
    if (!result.ok) throw invalid(result.message);
    if (result.value.pullVersion !== SUPPORTED_PULL_VERSION) throw new UnsupportedVersionError("pull");
    return { clientGroupID: result.value.clientGroupID, cookie: result.value.cookie };
  }
  const result = parse(PullRequest, body);
  if (!result.ok) throw invalid(result.message);
  return result.value;
}

/**
 * Validates a push body of either dialect and brings it to one shape. A batch past the protocol's
 * cap is refused as too large (413) before any of it is validated, so the client knows to split
 * it rather than fix it.
 */
export function parsePushRequest(body: unknown, dialect: Dialect): PushBatch {
  const count = mutationCount(body);
  if (count > MAX_MUTATIONS_PER_PUSH) {
    throw new EngineError(
      413,
      "payload_too_large",
      `a push holds at most ${MAX_MUTATIONS_PER_PUSH} mutations (this one has ${count}); send the rest in another push`,
    );
  }
  const result = dialect === "replicache" ? parse(ReplicachePushRequest, body) : parse(PushRequest, body);
  if (!result.ok) throw invalid(result.message);
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
