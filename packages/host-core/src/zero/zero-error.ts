/** The error kinds of Zero's protocol that weir sends (the client acts on each as named). */
export type ZeroErrorKind =
  | "Unauthorized"
  | "InvalidConnectionRequest"
  | "InvalidConnectionRequestBaseCookie"
  | "InvalidConnectionRequestLastMutationID"
  | "InvalidMessage"
  | "InvalidPush"
  | "PushFailed"
  | "VersionNotSupported"
  | "ServerOverloaded"
  | "Internal";

/**
 * A refusal sent as `["error", { kind, message, origin: "zeroCache" }]`; the connection then
 * closes. The client disconnects on any of them, and on some drops its local state or asks for an
 * update (see docs/protocol.md, "Zero dialect").
 */
export class ZeroError extends Error {
  constructor(
    readonly kind: ZeroErrorKind,
    message: string,
    /** A body of another shape than `{ kind, message, origin }` (PushFailed's). */
    private readonly body?: Record<string, unknown>,
  ) {
    super(message);
    this.name = "ZeroError";
  }

  /** The message as it goes on the wire. */
  frame(): string {
    const body = this.body
      ? { ...this.body, message: this.message }
      : { kind: this.kind, message: this.message, origin: "zeroCache" };
    return JSON.stringify(["error", body]);
  }
}
