import { ADMIN_ACTIONS, type AdminAction, isValidNamespace } from "@weir/protocol";
import { HttpError } from "./http-error.js";

export type SyncKind = "pull" | "push" | "replicache_pull" | "replicache_push";

export type Route =
  | { type: "sync"; kind: SyncKind; namespace: string }
  | { type: "wake"; kind: "wake"; namespace: string }
  /** Zero's sync protocol: `GET /<ns>/sync/v<N>/connect`, a WebSocket. */
  | { type: "zero"; kind: "zero"; namespace: string; version: number }
  | { type: "notify"; kind: "notify"; namespace: string }
  | { type: "admin"; kind: "admin"; namespace: string; action: AdminAction };

const SYNC_PATHS: Record<string, SyncKind> = {
  pull: "pull",
  push: "push",
  "replicache/pull": "replicache_pull",
  "replicache/push": "replicache_push",
};

const ZERO_CONNECT = /^sync\/v([0-9]{1,4})\/connect$/;

/** The route of a method and path, or the 400/404/405 that answers it. */
export function matchRoute(method: string, pathname: string): Route {
  const slash = pathname.indexOf("/", 1);
  if (!pathname.startsWith("/") || slash < 0) throw notFound(pathname);
  const namespace = pathname.slice(1, slash);
  const rest = pathname.slice(slash + 1);
  if (!isValidNamespace(namespace)) {
    throw new HttpError(
      "bad_request",
      "a namespace is 1 to 64 characters of A-Z, a-z, 0-9, '_' and '-' (the first path segment)",
    );
  }
  const kind = SYNC_PATHS[rest];
  if (kind !== undefined) {
    allow(method, ["POST"]);
    return { type: "sync", kind, namespace };
  }
  if (rest === "wake") {
    allow(method, ["GET"]);
    return { type: "wake", kind: "wake", namespace };
  }
  const zero = ZERO_CONNECT.exec(rest);
  if (zero) {
    allow(method, ["GET"]);
    return { type: "zero", kind: "zero", namespace, version: Number(zero[1]) };
  }
  if (rest === "notify") {
    allow(method, ["POST"]);
    return { type: "notify", kind: "notify", namespace };
  }
  if (rest.startsWith("admin/")) {
    const action = rest.slice("admin/".length);
    if (Object.hasOwn(ADMIN_ACTIONS, action)) {
      allow(method, ADMIN_ACTIONS[action as AdminAction]);
      return { type: "admin", kind: "admin", namespace, action: action as AdminAction };
    }
  }
  throw notFound(pathname);
}

function allow(method: string, methods: readonly string[]): void {
  if (!methods.includes(method)) {
    throw new HttpError("method_not_allowed", `use ${methods.join(" or ")} here`, {
      allow: methods.join(", "),
    });
  }
}

function notFound(pathname: string): HttpError {
  return new HttpError("not_found", `no route for ${pathname.slice(0, 200)}`);
}
