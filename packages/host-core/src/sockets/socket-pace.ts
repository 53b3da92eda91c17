/** The close code of a socket whose client sends faster than its pace allows: 1008 (policy). */
export const CLOSE_TOO_FAST = 1008;
/** The reason a socket closed for its pace is given. */
export const TOO_FAST_REASON = "messages faster than the server takes them";

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

/** The pace all of one user's sockets share, for `messagesPerSecond`: bursts of five seconds of it. */
export function userPace(messagesPerSecond: number): Pace {
  return { perSecond: messagesPerSecond, burst: messagesPerSecond * 5 };
}

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

  /** The messages left to take in now (negative: spent past the pace, by as many). */
  get level(): number {
    return this.tokens;
  }
}
