import type { ZeroConnectionState } from "./zero-connection-state.js";
import { ZeroError } from "./zero-error.js";
import type { ZeroHub } from "./zero-hub.js";
import { CLOSE_PROTOCOL_ERROR, type ZeroSocket } from "./zero-socket.js";
import type { ZeroSocketHandler, ZeroUpgrade } from "./zero-upgrade.js";

/** What sessions need of the host: the namespace's hub, opening it again for a parked socket. */
export interface ZeroSessionsHost {
  /** Opens the namespace (for the connection's user) and answers its hub, and a use to mark. */
  reopen(namespace: string, userID: string): Promise<{ hub: ZeroHub; touch(): void }>;
}

/**
 * A Zero socket for as long as it is open, across the namespace's closes: while the namespace is
 * open the socket's connection is in its hub; when the namespace is evicted (idle, or to make
 * room) the connection is let go of and the socket parked with its saved state, and its next
 * frame opens the namespace again and restores it there, as a Durable Object does after
 * hibernation. So an idle socket holds no namespace slot.
 */
class ZeroSession implements ZeroSocketHandler {
  readonly socket: ZeroSocket;
  private connection: ZeroSocketHandler | null = null;
  private state: ZeroConnectionState | null = null;
  private waiting: string[] = [];
  private reopening = false;
  private closed = false;
  touch: () => void = () => {};

  constructor(
    readonly namespace: string,
    private readonly outer: ZeroSocket,
    private readonly sessions: ZeroSessions,
  ) {
    this.socket = {
      send: (frame) => outer.send(frame),
      ...(outer.sendAll ? { sendAll: (frames: readonly string[]) => outer.sendAll!(frames) } : {}),
      close: (code, reason) => outer.close(code, reason),
      save: (state) => {
        this.state = state;
        outer.save?.(state);
      },
      detached: () => {
        this.connection = null;
        if (!this.closed) sessions.parked(this);
      },
    };
  }

  attach(connection: ZeroSocketHandler, touch: () => void): void {
    this.connection = connection;
    this.touch = touch;
  }

  /** The connection's saved state (set once it started). */
  get saved(): ZeroConnectionState | null {
    return this.state;
  }

  receive(frame: string): void {
    if (this.connection) {
      this.touch();
      this.connection.receive(frame);
      return;
    }
    this.waiting.push(frame);
    if (this.reopening) return;
    this.reopening = true;
    this.sessions.reopen(this).then(
      () => {
        this.reopening = false;
        const frames = this.waiting.splice(0);
        if (this.connection) for (const waiting of frames) this.connection.receive(waiting);
      },
      (error: unknown) => {
        this.reopening = false;
        this.fail(error);
      },
    );
  }

  /** Refuses the socket: the client hears why and reconnects. */
  fail(error: unknown): void {
    const refusal =
      error instanceof ZeroError
        ? error
        : new ZeroError(
            "ServerOverloaded",
            `the namespace could not be opened again: ${(error as Error).message}`,
          );
    this.outer.send(refusal.frame());
    this.outer.close(CLOSE_PROTOCOL_ERROR, refusal.kind);
    this.socketClosed();
  }

  socketClosed(): void {
    if (this.closed) return;
    this.closed = true;
    this.sessions.forget(this);
    this.connection?.socketClosed();
    this.connection = null;
  }
}

/** The Zero sockets of a host whose namespaces were evicted under them, by namespace. */
export class ZeroSessions {
  private readonly byNamespace = new Map<string, Set<ZeroSession>>();

  constructor(private readonly host: ZeroSessionsHost) {}

  /** The upgrade host-core accepted, its socket kept across evictions of the namespace. */
  wrap(namespace: string, upgrade: ZeroUpgrade, touch: () => void): ZeroUpgrade {
    return {
      protocol: upgrade.protocol,
      userID: upgrade.userID,
      open: async (socket) => {
        const session = new ZeroSession(namespace, socket, this);
        const connection = await upgrade.open(session.socket);
        if (!connection) return null;
        session.attach(connection, touch);
        return session;
      },
    };
  }

  /** How many sockets wait for their namespace to open again. */
  get size(): number {
    let size = 0;
    for (const set of this.byNamespace.values()) size += set.size;
    return size;
  }

  /**
   * The namespace opened: every socket parked on it gets its connection back in the new hub, so
   * pokes reach it again before it sends anything.
   */
  restore(namespace: string, hub: ZeroHub, touch: () => void): void {
    const parked = this.byNamespace.get(namespace);
    if (!parked) return;
    this.byNamespace.delete(namespace);
    for (const session of parked) {
      const state = session.saved;
      if (state === null) {
        session.fail(new ZeroError("Internal", "the connection could not be restored; reconnect"));
        continue;
      }
      try {
        session.attach(hub.restore(state, session.socket), touch);
      } catch (error) {
        session.fail(error);
      }
    }
  }

  /** The host is closing: parked sockets are told so and closed. */
  closeAll(): void {
    for (const set of [...this.byNamespace.values()])
      for (const session of [...set])
        session.fail(new ZeroError("ServerOverloaded", "the server is closing"));
  }

  parked(session: ZeroSession): void {
    let set = this.byNamespace.get(session.namespace);
    if (!set) {
      set = new Set();
      this.byNamespace.set(session.namespace, set);
    }
    set.add(session);
  }

  forget(session: ZeroSession): void {
    const set = this.byNamespace.get(session.namespace);
    if (!set?.delete(session)) return;
    if (set.size === 0) this.byNamespace.delete(session.namespace);
  }

  /** Opens the namespace for a parked socket (which restores every socket parked on it). */
  async reopen(session: ZeroSession): Promise<void> {
    const userID = session.saved?.claims.userID;
    if (userID === undefined)
      throw new ZeroError("Internal", "the connection could not be restored; reconnect");
    const { hub, touch } = await this.host.reopen(session.namespace, userID);
    // Opened by another request meanwhile: the namespace was open already, nothing restored yet.
    this.restore(session.namespace, hub, touch);
  }
}
