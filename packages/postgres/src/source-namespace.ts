import { isValidNamespace, NAMESPACE_PATTERN, UpstreamCallError } from "@weir/protocol";

/** Refuses, as a 400, a namespace the upstream contract cannot serve. */
export function checkSourceNamespace(namespace: unknown): asserts namespace is string {
  if (typeof namespace !== "string" || !isValidNamespace(namespace)) {
    throw new UpstreamCallError(400, "bad_request", `a namespace matches ${NAMESPACE_PATTERN}`);
  }
}
