import {
  CLOSE_TOO_FAST,
  DEFAULT_MAX_SOCKETS_PER_USER,
  DEFAULT_USER_MESSAGES_PER_SECOND,
  type Pace,
  TOO_FAST_REASON,
  TokenBucket,
  TooManySockets,
  type UserSocketOptions,
  userPace,
} from "@weir/host-core";

/** A socket's user tag starts so (a wake socket's other tag is its client id, a Zero socket's a key). */
export const USER_TAG_PREFIX = "weir:user:";

/** The tag a user's sockets carry: a hash of the user id (a tag is at most 256 characters). */
export async function userTag(userID: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(userID));
  const hex = [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, "0")).join("");
  return USER_TAG_PREFIX + hex.slice(0, 32);
}

/**
 * One namespace's wake and Zero sockets by user, in its object, as the Node host bounds them on
 * the thread its namespaces share: a user holds at most `maxSocketsPerUser` open at once (counted
 * from the platform's tags, so a hibernation forgets none), and the messages of each socket, and
 * of all its user's together, are taken in at a pace. The object cannot stop reading a socket, so
 * a message past the pace is still taken in, and a socket that sends its burst and as many again
 * past the pace (or whose user's sockets do) is closed with 1008. The paces live in the instance, by the socket's tags: one woken from hibernation
 * starts them full (and two wake sockets of one client and user share one).
 */
export class EdgeUserSockets {
  private readonly max: number | null;
  private readonly userPace: Pace;
  /** By the socket's tags: the platform may hand the same socket over as another object. */
  private readonly own = new Map<string, TokenBucket>();
  private readonly users = new Map<string, TokenBucket>();
  /** Sockets admitted and not accepted yet (a Zero connection opens in between), by user tag. */
  private readonly opening = new Map<string, number>();

  constructor(
    private readonly ctx: DurableObjectState,
    options: UserSocketOptions,
  ) {
    this.max =
      options.maxSocketsPerUser === undefined ? DEFAULT_MAX_SOCKETS_PER_USER : options.maxSocketsPerUser;
    this.userPace = userPace(options.userMessagesPerSecond ?? DEFAULT_USER_MESSAGES_PER_SECOND);
  }

  /**
   * Counts a socket of the user tagged `tag` as opening; throws TooManySockets when the user
   * holds (or is opening) as many as one may. Answers its release, called once it is accepted
   * or given up.
   */
  admit(tag: string): () => void {
    const opening = this.opening.get(tag) ?? 0;
    if (this.max !== null && this.ctx.getWebSockets(tag).length + opening >= this.max) {
      throw new TooManySockets(this.max, "user");
    }
    this.opening.set(tag, opening + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.opening.get(tag) ?? 1) - 1;
      if (left > 0) this.opening.set(tag, left);
      else this.opening.delete(tag);
    };
  }

  /**
   * Takes one message of `ws` (whose tags are `tags`) in at `pace` (and its user's): false when
   * the socket is closed for it (the message is dropped), having sent its burst and as many again
   * past the pace.
   */
  take(ws: WebSocket, tags: readonly string[], pace: Pace): boolean {
    const now = performance.now();
    const key = tags.join("\n");
    let own = this.own.get(key);
    if (!own) {
      own = new TokenBucket(pace);
      this.own.set(key, own);
    }
    const tag = tags.find((t) => t.startsWith(USER_TAG_PREFIX));
    let user: TokenBucket | undefined;
    if (tag !== undefined) {
      user = this.users.get(tag);
      if (!user) {
        user = new TokenBucket(this.userPace);
        this.users.set(tag, user);
      }
    }
    // Every message spends, in time or not: the level goes below zero by what came past the pace.
    own.ready(now);
    own.spend();
    user?.ready(now);
    user?.spend();
    if (own.level >= -pace.burst && (!user || user.level >= -this.userPace.burst)) return true;
    try {
      ws.close(CLOSE_TOO_FAST, TOO_FAST_REASON);
    } catch {
      // Closed already.
    }
    return false;
  }

  /** A socket closed: its user's pace is forgotten once they have no socket open here. */
  closed(ws: WebSocket): void {
    const tags = this.ctx.getTags(ws);
    this.own.delete(tags.join("\n"));
    const tag = tags.find((t) => t.startsWith(USER_TAG_PREFIX));
    if (tag === undefined) return;
    const open = this.ctx
      .getWebSockets(tag)
      .filter((other) => other !== ws && other.readyState === WebSocket.READY_STATE_OPEN);
    if (open.length === 0) this.users.delete(tag);
  }
}
