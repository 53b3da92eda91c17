import type { AudienceProbe } from "@weir/engine-wasm";
import type { Subscription } from "../audience/subscription.js";
import type { WakeAudience } from "../audience/wake-audience.js";
import type { Claims } from "../auth/claims.js";

/** The socket a client opened at `GET /<ns>/wake?clientID=...`, once authenticated. */
export interface WakeTarget {
  namespace: string;
  clientID: string;
  claims: Claims;
  /** What the socket must be woken for (host-core derives it from the config's visibility). */
  subscription: Subscription;
}

/**
 * Wake sockets. host-core authenticates a wake request and answers it with `upgrade` set to its
 * WakeTarget; the host then upgrades the connection as its runtime does (Node: `ws` on the raw
 * socket; Workers: a WebSocketPair and a 101). The host answers the text `ping` with `pong`, drops
 * dead sockets, and sends the text `wake` when host-core asks. A host keeps its sockets in an
 * `AudienceIndex` by their target's subscription, so that the namespace's audience of a commit
 * picks them out.
 */
export interface Wake {
  /**
   * Sends `wake` to the namespace's sockets the audience admits, except those of
   * `exceptClientID`; answers how many.
   */
  send(namespace: string, audience: WakeAudience, exceptClientID: string | null): number;
  /** How many wake sockets the namespace has open. */
  count(namespace: string): number;
  /** The probes the namespace's sockets' filters need answered about a commit, by id. */
  probes(namespace: string): ReadonlyMap<string, AudienceProbe>;
}
