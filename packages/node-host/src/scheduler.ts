import type { Scheduler } from "@weir/host-core";

/** One `setTimeout` per namespace. */
export class TimerScheduler implements Scheduler {
  private readonly timers = new Map<string, NodeJS.Timeout>();

  schedule(namespace: string, delayMs: number, task: () => void): void {
    this.cancel(namespace);
    const timer = setTimeout(() => {
      this.timers.delete(namespace);
      task();
    }, delayMs);
    this.timers.set(namespace, timer);
  }

  cancel(namespace: string): void {
    const timer = this.timers.get(namespace);
    if (timer) clearTimeout(timer);
    this.timers.delete(namespace);
  }

  close(): void {
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }
}
