import { HttpError } from "../http/http-error.js";
import type { Clock } from "../ports/clock.js";
import type { QuotaSpend, QuotaStore } from "../ports/quota-store.js";

/** One budget: at most `limit` units per key in any window of `windowMs` (a sliding estimate). */
export interface Budget {
  limit: number;
  windowMs: number;
}

/** What a key knows of its spend: counts as last read from the store, plus what it spent since. */
export interface KeyState {
  readonly key: string;
  window: number;
  current: number;
  previous: number;
  pending: number;
  /** When the counts were last read from the store (the clock's wall time). */
  readAt: number;
}

/** How often spends go to the shared store: the bound on how far processes may overshoot together. */
const FLUSH_INTERVAL_MS = 100;
/** Keys kept in memory before old ones are dropped (they are read from the store again). */
const MAX_KEYS = 10_000;

/**
 * Weighted budgets per key (a user) over a shared QuotaStore. A request is admitted while the
 * key's spend in the sliding window is under the limit, and charged its weight once answered
 * (its cost is known only then: a pull that turned out caught up costs less). Spends reach the
 * store within 100 ms, in one transaction that also reads what other processes spent, and counts
 * older than that are read again before a key is admitted; the store keeps them across restarts.
 * A request costs one clock read and a map lookup: the store is reached at most every 100 ms.
 *
 * The sliding window counts the previous window's spend in proportion to how much of it still
 * overlaps the last `windowMs`, so a burst at a window's edge cannot spend the limit twice.
 */
export class RequestQuotas {
  private readonly keys = new Map<string, KeyState>();
  private touched = new Set<KeyState>();
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly store: QuotaStore,
    private readonly clock: Clock,
    /** A flush on the timer that failed (the spends stay pending, for the next one). */
    private readonly onError: (error: unknown) => void,
  ) {}

  /**
   * Throws a 429 with Retry-After when `key` has spent its budget; otherwise answers its state,
   * for `charge` once the request's cost is known.
   */
  admit(key: string, budget: Budget, code: "rate_limited" | "namespace_quota", what: string): KeyState {
    const now = this.clock.now();
    const state = this.state(key, budget, now);
    // Other processes spend too: counts older than a flush interval are read again.
    if (now - state.readAt >= FLUSH_INTERVAL_MS) {
      this.touched.add(state);
      this.flush();
    }
    const elapsed = (now % budget.windowMs) / budget.windowMs;
    if (state.previous * (1 - elapsed) + state.current < budget.limit) return state;
    const seconds = Math.max(1, Math.ceil(waitMs(state, budget, elapsed) / 1000));
    throw new HttpError(
      code,
      `${what}: ${budget.limit} per ${budget.windowMs / 1000} s; retry in ${seconds} s`,
      {
        "retry-after": String(seconds),
      },
    );
  }

  /** Adds `units` to an admitted key's spend; `now` writes it to the store at once. */
  charge(admitted: KeyState, units: number, now = false): void {
    if (units <= 0) return;
    // A key whose window moved on (or that was dropped) since it was admitted is looked up again.
    const state = this.keys.get(admitted.key) === admitted ? admitted : this.current(admitted);
    state.current += units;
    state.pending += units;
    this.touched.add(state);
    if (now) this.flush();
    else this.timer ??= setTimeout(() => this.flushLater(), FLUSH_INTERVAL_MS);
  }

  /** Adds `units` to `key`'s spend without admitting it first (work already done). */
  spend(key: string, budget: Budget, units: number): void {
    if (units > 0) this.charge(this.state(key, budget, this.clock.now()), units);
  }

  /** Writes pending spends to the store and reads back what every process spent. */
  flush(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.touched.size === 0) return;
    const touched = [...this.touched];
    this.touched = new Set();
    const spends: QuotaSpend[] = touched.map(({ key, window, pending }) => ({ key, window, units: pending }));
    const readAt = this.clock.now();
    this.store.add(spends).forEach(({ current, previous }, i) => {
      const state = touched[i]!;
      state.current = current;
      state.previous = previous;
      state.pending = 0;
      state.readAt = readAt;
    });
  }

  private flushLater(): void {
    this.timer = undefined;
    try {
      this.flush();
    } catch (error) {
      this.onError(error);
    }
  }

  /** The key's state now, for a state admitted in a window that has since moved on. */
  private current(stale: KeyState): KeyState {
    const known = this.keys.get(stale.key);
    if (known) return known;
    this.keys.set(stale.key, stale);
    return stale;
  }

  private state(key: string, budget: Budget, now: number): KeyState {
    const window = Math.floor(now / budget.windowMs);
    const known = this.keys.get(key);
    if (known && known.window === window) return known;
    if (known?.pending) this.flush();
    // A new window, or a key not seen yet: what the store knows of it (the spend of other
    // processes too), read with a spend of nothing.
    const state: KeyState = {
      key,
      window,
      current: 0,
      previous: known && known.window === window - 1 ? known.current : 0,
      pending: 0,
      readAt: now,
    };
    this.keys.set(key, state);
    const [count] = this.store.add([{ key, window, units: 0 }]);
    if (count) {
      state.current = count.current;
      state.previous = count.previous;
    }
    if (this.keys.size > MAX_KEYS) this.forgetOld(window);
    return state;
  }

  private forgetOld(window: number): void {
    for (const [key, state] of this.keys)
      if (state.window < window - 1 && !state.pending) this.keys.delete(key);
  }
}

/** How long until the sliding estimate falls under the limit again (just under: it must be less). */
function waitMs(state: KeyState, budget: Budget, elapsed: number): number {
  const { limit, windowMs } = budget;
  // Within this window: the previous window's share shrinks as it slides out.
  if (state.current < limit && state.previous > 0) {
    const at = 1 - (limit - state.current) / state.previous;
    return (at - elapsed) * windowMs + 1;
  }
  // In the next one: this window's spend becomes the previous, sliding out in turn.
  const at = state.current > 0 ? Math.max(0, 1 - limit / state.current) : 0;
  return (1 - elapsed + at) * windowMs + 1;
}
