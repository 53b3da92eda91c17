import type {
  ZeroDownstream,
  ZeroPullRequestBody,
  ZeroPushBody,
  ZeroQueryOp,
  ZeroUpstream,
} from "@weir/protocol";
import type { Claims } from "../auth/claims.js";
import { nextTurn } from "../flows/next-turn.js";
import type { Logger } from "../ports/logger.js";
import type { ZeroConnectionState } from "./zero-connection-state.js";
import { formatZeroCookie, parseZeroCookie, type ZeroCookie } from "./zero-cookie.js";
import { ZeroError } from "./zero-error.js";
import type { ZeroGroup, ZeroPokePart } from "./zero-group.js";
import { readZeroMessage } from "./zero-messages.js";
import type { ZeroMessageCost } from "./zero-meter.js";
import { CLOSE_NORMAL, CLOSE_PROTOCOL_ERROR, type ZeroSocket } from "./zero-socket.js";

/**
 * Frames, and their characters, a connection holds received and not yet handled (they wait while a
 * frame before them does, such as a push waiting on the app): past either the socket is closed
 * with ServerOverloaded, and the client reconnects and sends what it still needs.
 */
export const MAX_WAITING_FRAMES = 1_000;
const MAX_WAITING_CHARS = 16 * 1024 * 1024;

/** How long frames read together are handled before the event loop has a turn, in milliseconds. */
const FRAME_SLICE_MS = 5;

/** What a connection asks of its namespace's hub. */
export interface ZeroConnectionHost {
  readonly logger: Logger;
  /** Checks a change of desired queries before it is taken: every put names a query the server defines. */
  checkQueries(connection: ZeroConnection, ops: readonly ZeroQueryOp[]): ZeroQueryOp[];
  /** Computes and sends the group's poke, now. */
  poke(group: ZeroGroup): void;
  push(connection: ZeroConnection, body: ZeroPushBody): Promise<void>;
  /** The answer to a `pull` message (mutation recovery of another client group). */
  recoveryPull(connection: ZeroConnection, body: ZeroPullRequestBody): ZeroDownstream;
  /** Authenticates a new credential (`updateAuth`): the claims, or a rejection. */
  reauthenticate(token: string): Promise<Claims>;
  /** The connection acts with new claims now: its group's rows follow them. */
  reauthenticated(connection: ZeroConnection): void;
  /** Charges a message to the user's budget: false when it is refused (and must not run). */
  charge(connection: ZeroConnection, cost: ZeroMessageCost): boolean;
  closed(connection: ZeroConnection): void;
}

/**
 * One client's Zero WebSocket. Frames are handled one at a time, in order; an invalid one
 * answers an `error` message and closes the socket, and nothing of it is applied.
 */
export class ZeroConnection {
  readonly clientID: string;
  readonly wsid: string;
  claims: Claims;
  /** The cookie the client is at (its baseCookie, then each poke's). */
  cookie: ZeroCookie | null;
  /** The client sent initConnection (in the protocol header or as its first message). */
  initialized: boolean;
  private authToken: string | null;
  private open = true;
  private queue: Promise<void> = Promise.resolve();
  /** Frames received and not yet handled, and their characters. */
  private waiting = 0;
  private waitingChars = 0;
  /** Time spent handling frames since the event loop last had its turn between them. */
  private handlingMs = 0;
  /** A change of queries was taken and its poke waits for the frames queued behind it. */
  private pokeOwed = false;
  private pokeScheduled = false;
  private pokes: number;

  /** A connection in the state given: a new one's, or one a host saved and restores. */
  constructor(
    private readonly host: ZeroConnectionHost,
    readonly group: ZeroGroup,
    state: ZeroConnectionState,
    private readonly socket: ZeroSocket,
  ) {
    this.clientID = state.clientID;
    this.wsid = state.wsid;
    this.claims = state.claims;
    this.authToken = state.authToken;
    this.cookie = state.cookie === null ? null : parseZeroCookie(state.cookie);
    this.initialized = state.initialized;
    this.pokes = state.pokes;
  }

  /** What a host keeps to restore the connection elsewhere (also given to `socket.save`). */
  state(): ZeroConnectionState {
    return {
      clientID: this.clientID,
      clientGroupID: this.group.id,
      wsid: this.wsid,
      claims: this.claims,
      authToken: this.authToken,
      cookie: this.cookie === null ? null : formatZeroCookie(this.cookie),
      initialized: this.initialized,
      pokes: this.pokes,
    };
  }

  get isOpen(): boolean {
    return this.open;
  }

  /** The client's credential as an Authorization value (for a delegated push). */
  get authorization(): string | null {
    return this.authToken === null ? null : `Bearer ${this.authToken}`;
  }

  /** Sends `connected`, then takes the initConnection the client put in its protocol header. */
  start(init: readonly ZeroQueryOp[] | null): void {
    this.send(["connected", { wsid: this.wsid, timestamp: Date.now() }]);
    this.saved();
    if (init !== null) this.run(() => this.initialize(init));
  }

  /** A text frame from the client. */
  receive(frame: string): void {
    if (!this.open) return;
    this.waiting++;
    this.waitingChars += frame.length;
    if (this.waiting > MAX_WAITING_FRAMES || this.waitingChars > MAX_WAITING_CHARS) {
      this.fail(
        new ZeroError(
          "ServerOverloaded",
          `more than ${MAX_WAITING_FRAMES} frames or ${MAX_WAITING_CHARS} characters wait to be handled; reconnect`,
        ),
      );
      return;
    }
    this.queue = this.queue.then(async () => {
      this.waiting--;
      this.waitingChars -= frame.length;
      const started = performance.now();
      if (this.open) await this.handle(frame);
      // Frames read together are handled one after another, not all in one turn of the event
      // loop: past FRAME_SLICE_MS of them, what else waits (another namespace's request) runs.
      this.handlingMs += performance.now() - started;
      if (this.waiting > 0 && this.handlingMs >= FRAME_SLICE_MS) {
        this.handlingMs = 0;
        await nextTurn();
      }
      // Changes of queries queued together are applied by one poke, after the frames the socket
      // has read since (a macrotask: they come in with the next read): a flood of frames costs
      // one evaluation of what they leave, not one per frame.
      if (this.pokeOwed && this.waiting === 0 && !this.pokeScheduled) {
        this.pokeScheduled = true;
        setTimeout(() => this.owedPoke(), 0);
      }
    });
  }

  private owedPoke(): void {
    this.pokeScheduled = false;
    // More frames came in the meantime: the last of them schedules the poke again.
    if (!this.pokeOwed || this.waiting > 0 || !this.open) return;
    this.pokeOwed = false;
    try {
      this.host.poke(this.group);
    } catch (error) {
      this.failWith(error);
    }
  }

  /** The socket closed (the client left, or the host closed it). */
  socketClosed(): void {
    if (!this.open) return;
    this.open = false;
    this.host.closed(this);
  }

  /** The namespace let go of the connection, leaving its socket open (ZeroHub.close("detach")). */
  detach(): void {
    if (!this.open) return;
    this.open = false;
    this.host.closed(this);
    this.socket.detached?.();
  }

  /** Sends one poke: its start (from this client's cookie), its parts, its end at `cookie`. */
  sendPoke(parts: readonly ZeroPokePart[], cookie: ZeroCookie): void {
    if (!this.open) return;
    const pokeID = `${this.wsid}:${++this.pokes}`;
    const baseCookie = this.cookie === null ? null : formatZeroCookie(this.cookie);
    const messages: ZeroDownstream[] = [["pokeStart", { pokeID, baseCookie, timestamp: Date.now() }]];
    for (const part of parts) messages.push(["pokePart", { pokeID, ...part }]);
    messages.push(["pokeEnd", { pokeID, cookie: formatZeroCookie(cookie) }]);
    const frames = messages.map((message) => JSON.stringify(message));
    if (this.socket.sendAll) this.socket.sendAll(frames);
    else for (const frame of frames) this.socket.send(frame);
    this.cookie = cookie;
    this.saved();
  }

  /** Sends a message as it is. */
  send(message: ZeroDownstream): void {
    if (this.open) this.socket.send(JSON.stringify(message));
  }

  /** Sends the error and closes the socket. */
  fail(error: ZeroError): void {
    if (!this.open) return;
    this.socket.send(error.frame());
    this.open = false;
    this.socket.close(CLOSE_PROTOCOL_ERROR, error.kind);
    this.host.closed(this);
  }

  private saved(): void {
    if (this.open) this.socket.save?.(this.state());
  }

  private run(step: () => void | Promise<void>): void {
    this.queue = this.queue.then(async () => {
      if (!this.open) return;
      try {
        await step();
      } catch (error) {
        this.failWith(error);
      }
    });
  }

  private async handle(frame: string): Promise<void> {
    try {
      await this.dispatch(await readZeroMessage(frame));
    } catch (error) {
      this.failWith(error);
    }
  }

  private failWith(error: unknown): void {
    if (error instanceof ZeroError) {
      this.fail(error);
      return;
    }
    this.host.logger.log("error", { msg: "zero connection failed", error: String(error) });
    this.fail(new ZeroError("Internal", "the server failed; reconnect"));
  }

  private async dispatch(message: ZeroUpstream): Promise<void> {
    switch (message[0]) {
      case "initConnection":
        if (this.initialized) throw new ZeroError("InvalidMessage", "initConnection was sent already");
        this.initialize(message[1].desiredQueriesPatch);
        return;
      case "ping":
        this.send(["pong", {}]);
        return;
      case "closeConnection":
        this.open = false;
        this.socket.close(CLOSE_NORMAL, "closed by the client");
        this.host.closed(this);
        return;
      case "updateAuth": {
        const claims = await this.host.reauthenticate(message[1].auth);
        if (claims.userID !== this.group.userID) {
          throw new ZeroError("Unauthorized", "the new credential is another user's");
        }
        this.claims = claims;
        this.authToken = message[1].auth;
        this.saved();
        if (this.initialized) this.host.reauthenticated(this);
        return;
      }
      case "pull":
        this.send(this.host.recoveryPull(this, message[1]));
        return;
      default:
        break;
    }
    if (!this.initialized) throw new ZeroError("InvalidMessage", `${message[0]} before initConnection`);
    switch (message[0]) {
      case "changeDesiredQueries":
        if (!this.host.charge(this, { kind: "queries", ops: message[1].desiredQueriesPatch.length })) return;
        this.group.desire(this.clientID, this.host.checkQueries(this, message[1].desiredQueriesPatch));
        this.pokeOwed = true;
        return;
      case "push":
        if (!this.host.charge(this, { kind: "push", mutations: message[1].mutations.length })) return;
        await this.host.push(this, message[1]);
        return;
      case "ackMutationResponses":
        this.group.acknowledged(message[1].clientID, message[1].id);
        this.host.poke(this.group);
        return;
      case "deleteClients": {
        const clientIDs = (message[1].clientIDs ?? []).filter((id) => id !== this.clientID);
        this.group.forgetClients(clientIDs);
        this.send(["deleteClients", { clientIDs }]);
        this.host.poke(this.group);
        return;
      }
    }
  }

  /**
   * The connection's first queries. They are charged like a change of queries (a pull, and an
   * operation each): a client that connects again and again with a patch pays for each one.
   */
  private initialize(ops: readonly ZeroQueryOp[]): void {
    this.initialized = true;
    this.saved();
    if (!this.host.charge(this, { kind: "queries", ops: ops.length })) return;
    this.group.desire(this.clientID, this.host.checkQueries(this, ops));
    this.host.poke(this.group);
  }
}
