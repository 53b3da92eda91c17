import type { ZeroSocket } from "./zero-socket.js";

/**
 * A Zero connect request host-core accepted: the host upgrades the connection (answering with
 * `protocol` as its Sec-WebSocket-Protocol, which Zero's client requires to be echoed), then
 * calls `open` with the socket and feeds it the socket's frames. A refused request is upgraded
 * too: `open` sends the `error` message and closes, since the client reads refusals only there.
 */
export interface ZeroUpgrade {
  protocol: string | null;
  /** Whom the connection acts for; null when it is refused (`open` sends the refusal). */
  userID: string | null;
  open(socket: ZeroSocket): Promise<ZeroSocketHandler | null>;
}

/** What the host feeds a Zero socket's events to. */
export interface ZeroSocketHandler {
  receive(frame: string): void;
  socketClosed(): void;
}
