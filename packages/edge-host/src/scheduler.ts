import type { Scheduler } from "@weir/host-core";

/**
 * The Scheduler port inside a Durable Object: host-core's timers (the wake window, a few
 * milliseconds) are in-memory state that dies with the object, so they are plain timers. Work that
 * must outlive an eviction goes on the object's alarm instead (see `alarm` in the config).
 */
export class ObjectScheduler implements Scheduler {
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
}
