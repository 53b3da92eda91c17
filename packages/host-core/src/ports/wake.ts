import type { Claims } from "../claims.js";

/** The socket a client opened at `GET /<ns>/wake?clientID=...`, once authenticated. */
export interface WakeTarget {
  namespace: string;
  clientID: string;
  claims: Claims;
}

/**
 * Wake sockets. The host upgrades the request, answers the text `ping` with `pong`, drops dead
 * sockets, and sends the text `wake` when host-core asks.
 */
export interface Wake {
  /** Upgrades an authenticated wake request; answers what the runtime needs (101 in Workers). */
  accept(request: Request, target: WakeTarget): Response | Promise<Response>;
  /** Sends `wake` to every socket of the namespace except those of `exceptClientID`; answers how many. */
  send(namespace: string, exceptClientID: string | null): number;
  /** How many wake sockets the namespace has open. */
  count(namespace: string): number;
}
