import type { Scheduler } from "../ports/scheduler.js";

/**
 * At most one `wake` per socket per window. The first commit of a quiet period wakes at once (so
 * a lone write is seen quickly); commits during the window are gathered and wake once when it
 * closes. A socket is skipped only when its client was the window's one writer.
 */
export class WakeCoalescer {
  private windowOpen = false;
  private pending = new Set<string>();

  constructor(
    private readonly namespace: string,
    private readonly windowMs: number,
    private readonly scheduler: Scheduler,
    private readonly send: (exceptClientID: string | null) => void,
  ) {}

  /** Records a commit by these clients; none means an operator's change that wakes everyone. */
  notify(writers: Iterable<string>): void {
    let any = false;
    for (const writer of writers) {
      this.pending.add(writer);
      any = true;
    }
    // Client ids are never empty, so "" stands for a writer that no socket belongs to.
    if (!any) this.pending.add("");
    if (this.pending.size === 0 || this.windowOpen) return;
    this.flush();
  }

  cancel(): void {
    if (this.windowOpen) this.scheduler.cancel(this.namespace);
    this.windowOpen = false;
    this.pending.clear();
  }

  private flush(): void {
    const writers = this.pending;
    this.pending = new Set();
    this.send(writers.size === 1 ? writers.values().next().value! : null);
    if (this.windowMs <= 0) return;
    this.windowOpen = true;
    this.scheduler.schedule(this.namespace, this.windowMs, () => {
      this.windowOpen = false;
      if (this.pending.size > 0) this.flush();
    });
  }
}
