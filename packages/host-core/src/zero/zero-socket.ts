import type { ZeroConnectionState } from "./zero-connection-state.js";

/**
 * A client's Zero WebSocket, as a host hands it to host-core: text frames out, a close. The host
 * feeds the frames it receives to the connection (`receive`) and tells it when the socket closed.
 */
export interface ZeroSocket {
  send(frame: string): void;
  /** Sends frames in order, together (one write to the network where the host can). */
  sendAll?(frames: readonly string[]): void;
  close(code: number, reason: string): void;
  /**
   * The connection's state changed (it started, initialized, was poked, took a new credential).
   * A host that may restore the connection in another process keeps it (`ZeroHub.restore`).
   */
  save?(state: ZeroConnectionState): void;
  /**
   * The namespace closed under the connection (evicted or idle) and let go of it; the socket
   * stays open, and the host restores the connection from its saved state when the namespace
   * opens again.
   */
  detached?(): void;
}

/** WebSocket close codes weir uses: done, and refused for a protocol error. */
export const CLOSE_NORMAL = 1000;
export const CLOSE_PROTOCOL_ERROR = 1002;
