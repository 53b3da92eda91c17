/**
 * When a namespace stores its counters (requests change them in memory). A Node server loses
 * them only if it crashes, so now and then is enough; a Durable Object is evicted without notice,
 * so it stores them with every write request (which writes anyway) and soon after pulls.
 */
export interface CounterFlushPolicy {
  /** Store them with every request that writes (a push, an admin change). */
  afterWrites: boolean;
  /** Store them at most this long after they changed. */
  intervalMs: number;
}

export const DEFAULT_COUNTER_FLUSH: CounterFlushPolicy = { afterWrites: false, intervalMs: 5_000 };

/** Applies a CounterFlushPolicy: `changed` after each request, a timer for what is left. */
export class CounterFlush {
  private savedAt: number;
  private timer: ReturnType<typeof setTimeout> | undefined;

  /** `now`: when the counters were read (as stored). */
  constructor(
    private readonly policy: CounterFlushPolicy,
    private readonly save: () => void,
    now: number,
  ) {
    this.savedAt = now;
  }

  changed(writes: boolean, now: number): void {
    if ((writes && this.policy.afterWrites) || now - this.savedAt >= this.policy.intervalMs) {
      this.flush(now);
      return;
    }
    if (this.timer !== undefined) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.flush(this.savedAt + this.policy.intervalMs);
    }, this.policy.intervalMs);
    (this.timer as { unref?: () => void }).unref?.();
  }

  cancel(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private flush(now: number): void {
    this.cancel();
    this.savedAt = now;
    this.save();
  }
}
