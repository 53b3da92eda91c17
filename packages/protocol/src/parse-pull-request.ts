import type { Dialect } from "./dialect.js";
import { parse } from "./parse.js";
import { PullRequest, type QueryPatchOperation } from "./pull-request.js";
import { ReplicachePullRequest, SUPPORTED_PULL_VERSION } from "./replicache-pull-request.js";
import { UnsupportedVersionError, WireError } from "./wire-error.js";

/** A pull after validation, one shape for both dialects. */
export interface ParsedPull {
  clientGroupID: string;
  clientID?: string;
  cookie: number | null;
  /** The native dialect's query patch, when the group pulls by queries. */
  queries?: { patch: QueryPatchOperation[] };
}

/** Validates a pull body of either dialect (`bad_request` or `unsupported_version` when not). */
export function parsePullRequest(body: unknown, dialect: Dialect): ParsedPull {
  if (dialect === "replicache") {
    const result = parse(ReplicachePullRequest, body);
    if (!result.ok) throw new WireError("bad_request", result.message);
    if (result.value.pullVersion !== SUPPORTED_PULL_VERSION) throw new UnsupportedVersionError("pull");
    return { clientGroupID: result.value.clientGroupID, cookie: result.value.cookie };
  }
  const result = parse(PullRequest, body);
  if (!result.ok) throw new WireError("bad_request", result.message);
  return result.value;
}
