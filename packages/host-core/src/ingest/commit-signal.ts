/** Callers waiting for the upstream to commit more (a catchUp between its passes). */
export class CommitSignal {
  private readonly waiters = new Set<() => void>();

  /** The upstream committed (the host's in-process notify): every waiter looks again. */
  moved(): void {
    const waiting = [...this.waiters];
    this.waiters.clear();
    for (const resolve of waiting) resolve();
  }

  /** Resolves at the next `moved`, or after `ms`. */
  next(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.waiters.add(done);
    });
  }
}
