import { type Pace, TokenBucket } from "./message-pace.js";

/** Wake and Zero sockets one user may hold open at once, by default. */
export const DEFAULT_MAX_SOCKETS_PER_USER = 100;
/**
 * Messages a second that all of one user's sockets together are taken in at, by default: twice a
 * Zero socket's own pace, with a burst of five seconds of it.
 */
export const DEFAULT_USER_MESSAGES_PER_SECOND = 200;

/** A socket refused: its user holds as many as one may (429), or the server does (503). */
export class TooManySockets extends Error {
  readonly status: 429 | 503;
  readonly code: "too_many_sockets" | "server_busy";
  /** The refusal's headers: a Retry-After when the server is full. */
  readonly headers: Record<string, string>;

  constructor(max: number, whose: "user" | "server") {
    const sockets = `${max} socket${max === 1 ? "" : "s"}`;
    super(
      whose === "user"
        ? `this user has ${sockets} open, the most one user may; close one to open another`
        : `the server holds ${sockets}, as many as it may; try again later`,
    );
    this.status = whose === "user" ? 429 : 503;
    this.code = whose === "user" ? "too_many_sockets" : "server_busy";
    this.headers = whose === "user" ? {} : { "retry-after": "5" };
  }
}

/** One open socket's share of its user: the pace all their sockets share, and its release. */
export interface UserShare {
  readonly pace: TokenBucket;
  /** The socket closed (once; later calls do nothing). */
  release(): void;
}

interface User {
  sockets: number;
  pace: TokenBucket;
}

/**
 * The wake and Zero sockets of each user, on the thread that holds them: a user holds at most
 * `max` at once and the server `maxTotal` (null: no cap), and a user's messages are taken in at
 * one pace shared by all of them, so opening more sockets buys a user no more of the thread. A
 * user with no socket open is forgotten.
 */
export class UserSockets {
  private readonly users = new Map<string, User>();
  private readonly pace: Pace;
  private total = 0;
  /** Sockets refused so far, by the cap that refused them. */
  readonly refusals = { user: 0, server: 0 };

  constructor(
    private readonly max: number | null,
    messagesPerSecond: number,
    private readonly maxTotal: number | null = null,
  ) {
    this.pace = { perSecond: messagesPerSecond, burst: messagesPerSecond * 5 };
  }

  /**
   * Counts one more socket of `userID`; throws TooManySockets when they hold `max` already, or
   * the server `maxTotal`.
   */
  open(userID: string): UserShare {
    let user = this.users.get(userID);
    if (user && this.max !== null && user.sockets >= this.max) {
      this.refusals.user++;
      throw new TooManySockets(this.max, "user");
    }
    if (this.maxTotal !== null && this.total >= this.maxTotal) {
      this.refusals.server++;
      throw new TooManySockets(this.maxTotal, "server");
    }
    if (!user) {
      user = { sockets: 0, pace: new TokenBucket(this.pace) };
      this.users.set(userID, user);
    }
    user.sockets++;
    this.total++;
    const held = user;
    let released = false;
    return {
      pace: held.pace,
      release: () => {
        if (released) return;
        released = true;
        this.total--;
        if (--held.sockets === 0 && this.users.get(userID) === held) this.users.delete(userID);
      },
    };
  }
}
