import { EngineFailure } from "@weir/engine-wasm";
import { HttpError } from "../http/http-error.js";
import type { RequestRecord } from "../http/request-record.js";
import type { NamespaceRegistry } from "../namespace/namespace-registry.js";
import type { NamespaceService } from "../namespace/namespace-service.js";
import { NamespaceUnavailableError } from "../namespace/namespace-unavailable-error.js";
import { storageFailure } from "../namespace/storage-failure.js";

const STORAGE_FULL =
  "the namespace's storage is full: nothing of this request was stored; retry once there is room";

/**
 * What a failure means for its namespace. A full disk refuses the write (507) and leaves the
 * namespace open; a damaged database, or an engine failure, takes the namespace's service out
 * (the next request opens it afresh), and a damaged one is refused until it is fixed.
 */
export function namespaceFailure(
  registry: NamespaceRegistry,
  error: unknown,
  namespace: string | undefined,
  record: RequestRecord,
  service: NamespaceService | undefined,
): unknown {
  if (error instanceof EngineFailure) {
    if (service) registry.retire(service, false);
    return error;
  }
  const kind = error instanceof NamespaceUnavailableError ? "corrupt" : storageFailure(error);
  if (kind === "full") return new HttpError("quota_exceeded", STORAGE_FULL, { "retry-after": "60" });
  if (kind !== "corrupt" || namespace === undefined) return error;
  const unavailable =
    error instanceof NamespaceUnavailableError
      ? error
      : new NamespaceUnavailableError("corrupt", (error as Error).message, service?.store.location);
  registry.refuse(namespace, record.ns ?? "", unavailable);
  if (service) registry.retire(service, true);
  return unavailable;
}
