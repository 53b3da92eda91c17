import { WebSocket } from "ws";

/** The close code of a socket whose client sends faster than its pace allows: 1008 (policy). */
const CLOSE_TOO_FAST = 1008;
/** How long a socket closed for its pace has to end its side before it is cut. */
const CLOSE_GRACE_MS = 1_000;

/** How fast a socket's messages are taken in: a sustained rate, and a burst above it. */
export interface Pace {
  perSecond: number;
  burst: number;
}

/** A wake socket's client sends `ping` now and then: a few a second at most is generous. */
export const WAKE_PACE: Pace = { perSecond: 10, burst: 50 };
/**
 * A Zero client's frames: pushes, changes of its queries and pings, in bursts on connect. The
 * burst stays under the frames a connection may have waiting (1,000), so a flood meets the pace.
 */
export const ZERO_PACE: Pace = { perSecond: 100, burst: 300 };

/** Messages taken in at a pace: full at first, refilled at `perSecond` up to `burst`. */
export class TokenBucket {
  private tokens: number;
  private last = performance.now();

  constructor(readonly pace: Pace) {
    this.tokens = pace.burst;
  }

  /** Whether a message may be taken in now (refilling first). */
  ready(now: number): boolean {
    this.tokens = Math.min(this.pace.burst, this.tokens + ((now - this.last) * this.pace.perSecond) / 1000);
    this.last = now;
    return this.tokens >= 1;
  }

  spend(): void {
    this.tokens -= 1;
  }
}

/**
 * Bounds how fast one socket's messages are taken in on the thread every namespace shares: a
 * message past the pace (the socket's own, or its user's, which all the user's sockets share)
 * pauses the socket's reads until the pace allows one more (the flood waits in the client's and
 * the kernel's buffers, not here), and a socket that sends on past its burst (a chunk read
 * before the pause holding many messages) is closed with 1008. An ordinary client never meets it.
 */
export class MessagePace {
  private readonly own: TokenBucket;
  private excess = 0;
  private resumeTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly ws: WebSocket,
    private readonly pace: Pace,
    private readonly user: TokenBucket | null = null,
  ) {
    this.own = new TokenBucket(pace);
  }

  /** Takes one message in: false when it came past the pace (the socket is paused, or closed). */
  take(): boolean {
    const now = performance.now();
    // Both refill; a message spends from both or neither.
    const ownReady = this.own.ready(now);
    const userReady = this.user ? this.user.ready(now) : true;
    if (ownReady && userReady) {
      this.own.spend();
      this.user?.spend();
      this.excess = 0;
      return true;
    }
    if (++this.excess > this.pace.burst) {
      if (this.ws.readyState === WebSocket.OPEN) {
        this.ws.close(CLOSE_TOO_FAST, "messages faster than the server takes them");
        this.closed();
      }
      return false;
    }
    if (!this.resumeTimer) {
      this.ws.pause();
      this.resumeTimer = setTimeout(
        () => {
          this.resumeTimer = null;
          if (this.ws.readyState === WebSocket.OPEN) this.ws.resume();
        },
        Math.ceil(1000 / Math.min(this.pace.perSecond, this.user?.pace.perSecond ?? Infinity)),
      );
      this.resumeTimer.unref();
    }
    return false;
  }

  /**
   * The server closed the socket (for its pace, or for any other reason). While its reads are
   * paused its answer to the close frame is never read: the connection ends after a grace, the
   * client having had the close frame and its code.
   */
  closed(): void {
    if (this.ws.isPaused) setTimeout(() => this.ws.terminate(), CLOSE_GRACE_MS).unref();
  }

  /** The socket closed: no read resumes. */
  stop(): void {
    if (this.resumeTimer) clearTimeout(this.resumeTimer);
    this.resumeTimer = null;
  }
}
