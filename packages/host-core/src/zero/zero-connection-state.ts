import type { Claims } from "../auth/claims.js";

/**
 * What a Zero connection is, beyond its socket: enough for a host whose process may go while the
 * socket stays open (a hibernating Durable Object) to restore the connection in a new process.
 * The group's queries are the engine's (stored in the namespace's database).
 */
export interface ZeroConnectionState {
  clientID: string;
  clientGroupID: string;
  wsid: string;
  /** The claims the connection acts with (visibility, pushes). */
  claims: Claims;
  /** The client's credential, for a delegated push's Authorization. */
  authToken: string | null;
  /** The cookie the client is at: its baseCookie, then each poke's (null: it has nothing). */
  cookie: string | null;
  /** The client sent initConnection. */
  initialized: boolean;
  /** How many pokes were sent (the next poke's id follows on). */
  pokes: number;
}
