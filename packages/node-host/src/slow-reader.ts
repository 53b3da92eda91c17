import { WebSocket } from "ws";

/**
 * The close code of a socket whose client stopped reading: 1013 ("try again later"). Clients
 * reconnect and catch up from their cookie.
 */
const CLOSE_TOO_SLOW = 1013;

/** Unsent bytes a socket may hold before it is closed (8 MiB). */
export const DEFAULT_MAX_SOCKET_BUFFER_BYTES = 8 * 1024 * 1024;

/**
 * Whether nothing more may be sent on the socket: it is not open, or it holds more unsent bytes
 * than `bound`, and is then closed with 1013. A client that stopped reading then costs the server at most the
 * bound and one message, not everything sent to it since.
 */
export function closedAsSlow(ws: WebSocket, bound: number): boolean {
  if (ws.readyState !== WebSocket.OPEN) return true;
  if (ws.bufferedAmount <= bound) return false;
  // The close frame waits behind what the client did not read; one that never reads again is
  // cut off by ws's own close timeout (30 s), which frees what was queued for it.
  ws.close(CLOSE_TOO_SLOW, "the client is not reading: reconnect");
  return true;
}
