import type { Scheduler } from "./scheduler.js";

/**
 * The Scheduler port on plain timers, which every runtime has: one `setTimeout` per namespace.
 * Node uses it as is; a Durable Object uses it for its short in-memory timers (the wake window)
 * and keeps work that must outlive an eviction on its alarm.
 */
export class TimerScheduler implements Scheduler {
  private readonly timers = new Map<string, ReturnType<typeof setTimeout>>();

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
    if (timer !== undefined) clearTimeout(timer);
    this.timers.delete(namespace);
  }

  close(): void {
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }
}
