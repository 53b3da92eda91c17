import type { Claims } from "../auth/claims.js";

/** The socket a client opened at `GET /<ns>/wake?clientID=...`, once authenticated. */
export interface WakeTarget {
  namespace: string;
  clientID: string;
  claims: Claims;
}

/**
 * Wake sockets. host-core authenticates a wake request and answers it with `upgrade` set to its
 * WakeTarget; the host then upgrades the connection as its runtime does (Node: `ws` on the raw
 * socket; Workers: a WebSocketPair and a 101). The host answers the text `ping` with `pong`, drops
 * dead sockets, and sends the text `wake` when host-core asks.
 */
export interface Wake {
  /** Sends `wake` to every socket of the namespace except those of `exceptClientID`; answers how many. */
  send(namespace: string, exceptClientID: string | null): number;
  /** How many wake sockets the namespace has open. */
  count(namespace: string): number;
}
