import { CLOSE_TOO_FAST, type Pace, TOO_FAST_REASON, TokenBucket } from "@weir/host-core";
import { WebSocket } from "ws";

/** How long a socket closed for its pace has to end its side before it is cut. */
const CLOSE_GRACE_MS = 1_000;

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
        this.ws.close(CLOSE_TOO_FAST, TOO_FAST_REASON);
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
