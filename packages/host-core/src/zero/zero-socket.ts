/**
 * A client's Zero WebSocket, as a host hands it to host-core: text frames out, a close. The host
 * feeds the frames it receives to the connection (`receive`) and tells it when the socket closed.
 */
export interface ZeroSocket {
  send(frame: string): void;
  close(code: number, reason: string): void;
}

/** WebSocket close codes weir uses: done, and refused for a protocol error. */
export const CLOSE_NORMAL = 1000;
export const CLOSE_PROTOCOL_ERROR = 1002;
