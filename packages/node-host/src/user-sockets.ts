import { type Pace, TokenBucket, TooManySockets, userPace } from "@weir/host-core";

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
    this.pace = userPace(messagesPerSecond);
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
