import type { MessagePort } from "node:worker_threads";
import { UpstreamCallError, UpstreamGoneError } from "@weir/protocol";
import type { UpstreamSchema } from "./upstream-interface.js";

/** What the caller's thread asks of the reader's thread; each is answered by a `reply` of its `id`. */
export type ThreadRequest = { id: number } & (
  | { t: "changes"; namespace: string; watermark: bigint; limit: number }
  | { t: "snapshotPage"; namespace: string; table: string; cursor: string | null; limit: number }
  | { t: "status" }
  | { t: "close" }
);

/** A channel to the reader's thread for another thread (`upstream.connect()`). */
export type ThreadConnect = { t: "connect"; port: MessagePort };

/** What the reader's thread sends: answers, and the callbacks the caller gave. */
export type ThreadEvent =
  | { t: "started"; schema: UpstreamSchema }
  | { t: "failed"; error: WireError }
  | { t: "reply"; id: number; value?: unknown; error?: WireError }
  | { t: "schema"; schema: UpstreamSchema }
  | { t: "commit"; namespaces: string[]; watermark: bigint }
  | { t: "log"; level: "info" | "warn" | "error"; fields: Record<string, unknown> };

/** The options' functions the caller gave, which the reader's thread calls back through events. */
export interface ThreadCallbacks {
  logger: boolean;
  onCommit: boolean;
}

/** An error as it crosses threads: the contract's refusals keep their class, status and code. */
export type WireError =
  | { kind: "gone"; oldest: bigint; message: string }
  | { kind: "call"; status: number; code: string; message: string; retryAfterMs?: number }
  | { kind: "error"; message: string };

export function toWireError(error: unknown): WireError {
  if (error instanceof UpstreamGoneError)
    return { kind: "gone", oldest: error.oldest, message: error.message };
  if (error instanceof UpstreamCallError) {
    return {
      kind: "call",
      status: error.status,
      code: error.code,
      message: error.message,
      ...(error.retryAfterMs === undefined ? {} : { retryAfterMs: error.retryAfterMs }),
    };
  }
  return { kind: "error", message: error instanceof Error ? error.message : String(error) };
}

export function fromWireError(wire: WireError): Error {
  const error =
    wire.kind === "gone"
      ? new UpstreamGoneError(wire.oldest)
      : wire.kind === "call"
        ? new UpstreamCallError(wire.status, wire.code, wire.message, wire.retryAfterMs)
        : new Error(wire.message);
  error.message = wire.message;
  return error;
}
