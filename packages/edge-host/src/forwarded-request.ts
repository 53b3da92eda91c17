import type { Claims } from "@weir/host-core";

/**
 * The header that carries what the Worker established to the namespace's object. Only the Worker
 * sets it: every `x-weir-` header a client sends is removed first, and an object is reachable only
 * through its Worker's binding.
 */
export const FORWARDED_HEADER = "x-weir-forwarded";
/** Set by the object on a push answer that must never reach the client (a dropped response). */
export const DROPPED_HEADER = "x-weir-dropped";
const INTERNAL_PREFIX = "x-weir-";
/** Claims travel in a header; keep them well under the platform's header limits. */
export const MAX_FORWARDED_BYTES = 16 * 1024;

export interface Forwarded {
  /** The namespace's hash, as the Worker computed it from the path it routed on. */
  ns: string;
  /** The authenticated claims (sync and wake routes). */
  claims?: Claims;
  /** The Worker checked the admin key or `isAdmin` (admin routes). */
  admin?: true;
  /** The Worker checked the notify token or hook (the notify route). */
  notify?: true;
}

/** Removes every internal header a client sent. */
export function stripInternalHeaders(headers: Headers): Headers {
  const clean = new Headers(headers);
  for (const name of [...clean.keys()]) if (name.startsWith(INTERNAL_PREFIX)) clean.delete(name);
  return clean;
}

/** Base64url of the UTF-8 JSON, so claims with any characters fit in a header. */
export function encodeForwarded(forwarded: Forwarded): string {
  const bytes = new TextEncoder().encode(JSON.stringify(forwarded));
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

export function decodeForwarded(value: string): Forwarded | null {
  try {
    const binary = atob(value.replaceAll("-", "+").replaceAll("_", "/"));
    const bytes = Uint8Array.from(binary, (char) => char.charCodeAt(0));
    const parsed = JSON.parse(new TextDecoder().decode(bytes)) as Forwarded;
    if (typeof parsed !== "object" || parsed === null || typeof parsed.ns !== "string") return null;
    return parsed;
  } catch {
    return null;
  }
}

/**
 * What the Worker forwarded with a request, read from its header (for a request host-core rebuilt,
 * such as the credential check of a Zero connection); null when it carries none.
 */
export function forwardedOf(request: { headers: { get(name: string): string | null } }): Forwarded | null {
  const header = request.headers.get(FORWARDED_HEADER);
  return header === null ? null : decodeForwarded(header);
}

/**
 * An answer that promises a byte and sends none, so the client's connection breaks mid-answer
 * and it sees no answer at all (a body that merely errors can reach the client as an empty one).
 */
export function droppedResponse(): Response {
  const { readable, writable } = new FixedLengthStream(1);
  writable.close().catch(() => {
    // The stream refuses to close short of its length: that failure is the point.
  });
  return new Response(readable, { status: 200, headers: { "content-type": "application/json" } });
}
