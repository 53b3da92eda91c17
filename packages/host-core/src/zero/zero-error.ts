import type { ZeroErrorBody, ZeroErrorKind, ZeroPushFailedBody } from "@weir/protocol";

export type { ZeroErrorKind } from "@weir/protocol";

/** A body of another shape than `{ kind, message, origin }`, without its message. */
type ZeroErrorExtra =
  | (ZeroPushFailedBody extends infer B ? (B extends unknown ? Omit<B, "message"> : never) : never)
  | { kind: "ServerOverloaded"; origin: "zeroCache"; minBackoffMs: number };

/**
 * A refusal sent as `["error", { kind, message, origin: "zeroCache" }]`; the connection then
 * closes. The client disconnects on any of them, and on some drops its local state or asks for an
 * update (see docs/protocol.md, "Zero dialect").
 */
export class ZeroError extends Error {
  constructor(
    readonly kind: ZeroErrorKind,
    message: string,
    /** A body of another shape than `{ kind, message, origin }` (PushFailed's, ServerOverloaded's). */
    private readonly body?: ZeroErrorExtra,
  ) {
    super(message);
    this.name = "ZeroError";
  }

  /** The message's body as it goes on the wire. */
  wireBody(): ZeroErrorBody {
    return this.body
      ? ({ ...this.body, message: this.message } as ZeroErrorBody)
      : { kind: this.kind, message: this.message, origin: "zeroCache" };
  }

  /** The message as it goes on the wire. */
  frame(): string {
    return JSON.stringify(["error", this.wireBody()]);
  }
}
