/**
 * When a namespace moves to the overflow worker and back. A namespace one of whose steps held its
 * worker past the step budget twice within the quiet time moves to the overflow worker, a thread
 * shared only by namespaces that did the same: its long steps then delay only them, not the
 * namespaces that hash to its worker. It moves back once none of its steps passed the budget for
 * the quiet time. One slow step (a pause of the machine's) moves nothing. A namespace that moves
 * again within the time it last stayed stays twice as long (up to MAX_STAY_FACTOR times the quiet
 * time): each move closes its Zero sockets, and a namespace going back and forth would have its
 * clients reconnect every few minutes.
 */
export interface OverflowOptions {
  /** A step longer than this counts against its namespace (ms). */
  stepBudgetMs: number;
  /** Two such steps within this move it; none for this long moves it back (ms). */
  quietMs: number;
}

/** Namespaces in the overflow worker at most; past it, no other moves there. */
export const MAX_OVERFLOW_NAMESPACES = 10_000;

/** The longest a namespace stays in the overflow worker once quiet, in quiet times. */
export const MAX_STAY_FACTOR = 64;

/** When a namespace was last seen past the budget, and how long it stays once quiet (ms). */
interface Stay {
  last: number;
  stayMs: number;
}

export class OverflowPolicy {
  /** When each namespace at home last passed the budget (within the quiet time). */
  private readonly strikes = new Map<string, number>();
  /** Each namespace in the overflow worker. */
  private readonly overflowed = new Map<string, Stay>();
  /** Namespaces that moved back, when and after which stay (for as long as that stay again). */
  private readonly returns = new Map<string, Stay>();

  constructor(private readonly options: OverflowOptions) {}

  get stepBudgetMs(): number {
    return this.options.stepBudgetMs;
  }

  get size(): number {
    return this.overflowed.size;
  }

  inOverflow(namespace: string): boolean {
    return this.overflowed.has(namespace);
  }

  /** A step of the namespace passed the budget; answers whether it moves to the overflow worker now. */
  overBudget(namespace: string, now: number): boolean {
    const stay = this.overflowed.get(namespace);
    if (stay) {
      stay.last = now;
      return false;
    }
    const last = this.strikes.get(namespace);
    if (last === undefined || now - last > this.options.quietMs) {
      if (this.strikes.size >= MAX_OVERFLOW_NAMESPACES) this.forgetOldStrikes(now);
      this.strikes.set(namespace, now);
      return false;
    }
    if (this.overflowed.size >= MAX_OVERFLOW_NAMESPACES) return false;
    this.strikes.delete(namespace);
    return true;
  }

  /** The namespace is in the overflow worker now. */
  moved(namespace: string, now: number): void {
    const back = this.returns.get(namespace);
    this.returns.delete(namespace);
    const stayMs =
      back && now - back.last <= back.stayMs
        ? Math.min(back.stayMs * 2, this.options.quietMs * MAX_STAY_FACTOR)
        : this.options.quietMs;
    this.overflowed.set(namespace, { last: now, stayMs });
  }

  /** The namespace is back in its own worker. */
  returned(namespace: string, now: number): void {
    const stay = this.overflowed.get(namespace);
    this.overflowed.delete(namespace);
    if (!stay) return;
    if (this.returns.size >= MAX_OVERFLOW_NAMESPACES) {
      for (const [name, back] of this.returns) if (now - back.last > back.stayMs) this.returns.delete(name);
      if (this.returns.size >= MAX_OVERFLOW_NAMESPACES) this.returns.clear();
    }
    this.returns.set(namespace, { last: now, stayMs: stay.stayMs });
  }

  /** How long the namespace stays in the overflow worker once quiet (ms), or null when it is not there. */
  stayMs(namespace: string): number | null {
    return this.overflowed.get(namespace)?.stayMs ?? null;
  }

  /** The namespaces in the overflow worker that were quiet long enough to move back. */
  quiet(now: number): string[] {
    const names: string[] = [];
    for (const [name, stay] of this.overflowed) if (now - stay.last > stay.stayMs) names.push(name);
    return names;
  }

  private forgetOldStrikes(now: number): void {
    for (const [name, last] of this.strikes) if (now - last > this.options.quietMs) this.strikes.delete(name);
    if (this.strikes.size >= MAX_OVERFLOW_NAMESPACES) this.strikes.clear();
  }
}
