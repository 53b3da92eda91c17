/** Work being done (requests being answered), and a way to wait until there is none. */
export class InFlight {
  private count = 0;
  private waiters: Array<() => void> = [];

  get size(): number {
    return this.count;
  }

  enter(): void {
    this.count++;
  }

  leave(): void {
    if (--this.count > 0) return;
    const waiters = this.waiters;
    this.waiters = [];
    for (const resolve of waiters) resolve();
  }

  /** Counts `work` until it settles. */
  track(work: Promise<unknown>): void {
    this.enter();
    const done = () => this.leave();
    work.then(done, done);
  }

  /** Resolves once nothing is in flight (at once when nothing is). */
  async drained(): Promise<void> {
    while (this.count > 0) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }
}
