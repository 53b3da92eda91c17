import type { Clock } from "../ports/clock.js";

/**
 * Whether a namespace is in use: the requests (and sockets) holding it, when it was last used,
 * and whether it was taken out of service. The registry closes a namespace only when none holds
 * it: idle for long enough, or retired.
 */
export class NamespaceUsage {
  private active = 0;
  private last: number;
  private retiredState: { damaged: boolean } | null = null;

  constructor(private readonly clock: Clock) {
    this.last = clock.monotonic();
  }

  /** A request starts using the namespace. */
  enter(): void {
    this.active++;
  }

  /** A request is done with the namespace. */
  leave(): void {
    this.active--;
    this.last = this.clock.monotonic();
  }

  /** No request uses it now, and none did for `idleMs`. */
  idleFor(idleMs: number, now: number): boolean {
    return this.active === 0 && now - this.last >= idleMs;
  }

  get inUse(): boolean {
    return this.active > 0;
  }

  get lastUsed(): number {
    return this.last;
  }

  /** Takes it out of service: no new request gets it, and it closes once none uses it. */
  retire(damaged: boolean): void {
    this.retiredState = { damaged: damaged || (this.retiredState?.damaged ?? false) };
  }

  get retired(): { damaged: boolean } | null {
    return this.retiredState;
  }
}
