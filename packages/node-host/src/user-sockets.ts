import { type Pace, TokenBucket } from "./message-pace.js";

/** Wake and Zero sockets one user may hold open at once, by default. */
export const DEFAULT_MAX_SOCKETS_PER_USER = 100;
/**
 * Messages a second that all of one user's sockets together are taken in at, by default: twice a
 * Zero socket's own pace, with a burst of five seconds of it.
 */
export const DEFAULT_USER_MESSAGES_PER_SECOND = 200;

/** What the error of a refused socket says. */
export class TooManySockets extends Error {
  readonly status = 429;
  readonly code = "too_many_sockets";

  constructor(max: number) {
    super(`this user has ${max} sockets open, the most one user may; close one to open another`);
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
 * `max` at once (null: no cap), and their messages are taken in at one pace shared by all of
 * them, so opening more sockets buys a user no more of the thread. A user with no socket open is
 * forgotten.
 */
export class UserSockets {
  private readonly users = new Map<string, User>();
  private readonly pace: Pace;

  constructor(
    private readonly max: number | null,
    messagesPerSecond: number,
  ) {
    this.pace = { perSecond: messagesPerSecond, burst: messagesPerSecond * 5 };
  }

  /** Counts one more socket of `userID`; throws TooManySockets when they hold `max` already. */
  open(userID: string): UserShare {
    let user = this.users.get(userID);
    if (user && this.max !== null && user.sockets >= this.max) throw new TooManySockets(this.max);
    if (!user) {
      user = { sockets: 0, pace: new TokenBucket(this.pace) };
      this.users.set(userID, user);
    }
    user.sockets++;
    const held = user;
    let released = false;
    return {
      pace: held.pace,
      release: () => {
        if (released) return;
        released = true;
        if (--held.sockets === 0 && this.users.get(userID) === held) this.users.delete(userID);
      },
    };
  }

  /** Users with a socket open. */
  get size(): number {
    return this.users.size;
  }
}
