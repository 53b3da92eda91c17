import type { WakeTarget } from "../ports/wake.js";
import type { ZeroUpgrade } from "../zero/zero-upgrade.js";
/**
 * A request as host-core reads it: what a standard Request carries, with the body possibly read
 * already. Hosts that parse HTTP themselves (Node) build these directly and skip the cost of a
 * Request and its stream; `handle(request)` builds them from a Request.
 */
export interface RequestParts {
  method: string;
  /** The absolute URL. */
  url: string;
  headers: Headers;
  /** The body as read by the host; null for none; undefined to read it from `request()`. */
  body: Uint8Array | null | undefined;
  /** The standard Request, built only where one is needed (a wake upgrade). */
  request(): Request;
}

/** What `authenticate` and `isAdmin` see of a request. */
export type AuthRequest = Pick<Request, "method" | "url" | "headers">;

/** An answer before it becomes a Response (or is written straight to a socket). */
export interface ResponseParts {
  status: number;
  headers: Readonly<Record<string, string>>;
  body: string | null;
  /** Break the connection instead of answering (the drop-next-push-response knob). */
  drop?: boolean;
  /** An authenticated wake request: the host upgrades the connection to a wake socket for it. */
  upgrade?: WakeTarget;
  /** A Zero connect request: the host upgrades the connection and hands the socket to `zero`. */
  zero?: ZeroUpgrade;
}

/** The headers of a JSON answer, shared (and frozen) by every answer that adds none. */
const JSON_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  "content-type": "application/json; charset=utf-8",
});

/** A JSON answer. A string body is sent as is (the engine renders pull bodies itself). */
export function jsonParts(body: unknown, status = 200, headers?: Record<string, string>): ResponseParts {
  return {
    status,
    headers: headers === undefined ? JSON_HEADERS : { ...JSON_HEADERS, ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  };
}

export function partsFromRequest(request: Request): RequestParts {
  return {
    method: request.method,
    url: request.url,
    headers: request.headers,
    body: request.body ? undefined : null,
    request: () => request,
  };
}

export function toResponse(parts: ResponseParts): Response {
  if (parts.upgrade || parts.zero)
    throw new Error("a wake upgrade is the host's to make: check `upgrade` before toResponse");
  if (parts.drop) {
    // A body that fails mid-way: the client sees the connection break, as when a network drops an answer.
    const body = new ReadableStream({
      pull(controller) {
        controller.error(new Error("response dropped by the drop-next-push-response knob"));
      },
    });
    return new Response(body, { status: parts.status, headers: parts.headers });
  }
  return new Response(parts.body, { status: parts.status, headers: parts.headers });
}
