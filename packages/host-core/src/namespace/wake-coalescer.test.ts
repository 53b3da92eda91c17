import { describe, expect, it } from "vitest";
import type { Scheduler } from "../ports/scheduler.js";
import { WakeCoalescer } from "./wake-coalescer.js";

/** A scheduler whose timer fires when the test says, so the window is explicit. */
class StepScheduler implements Scheduler {
  task: (() => void) | undefined;
  schedule(_namespace: string, _delayMs: number, task: () => void): void {
    this.task = task;
  }
  cancel(): void {
    this.task = undefined;
  }
  fire(): void {
    const task = this.task;
    this.task = undefined;
    task?.();
  }
}

describe("WakeCoalescer", () => {
  it("wakes at once, then once per window, skipping a lone writer", () => {
    const scheduler = new StepScheduler();
    const sent: Array<string | null> = [];
    const coalescer = new WakeCoalescer("ns", 20, scheduler, ({ except }) => sent.push(except));
    coalescer.notify(["a"]);
    expect(sent).toEqual(["a"]);
    coalescer.notify(["a"]);
    coalescer.notify(["a"]);
    expect(sent).toEqual(["a"]);
    scheduler.fire();
    expect(sent).toEqual(["a", "a"]);
    coalescer.notify(["b"]);
    coalescer.notify(["c"]);
    scheduler.fire();
    // Two writers in one window: each needs the other's change, so nobody is skipped.
    expect(sent).toEqual(["a", "a", null]);
    scheduler.fire();
    expect(sent).toEqual(["a", "a", null]);
  });

  it("on close, wakes for what its window gathered at once, and opens no window", () => {
    const scheduler = new StepScheduler();
    const sent: Array<string | null> = [];
    const coalescer = new WakeCoalescer("ns", 20, scheduler, ({ except }) => sent.push(except));
    coalescer.notify(["a"]);
    coalescer.notify(["b"]);
    expect(sent).toEqual(["a"]);
    coalescer.close();
    expect(sent).toEqual(["a", "b"]);
    expect(scheduler.task).toBeUndefined();
    // Nothing gathered: closing sends nothing.
    coalescer.close();
    expect(sent).toEqual(["a", "b"]);
  });

  it("wakes everyone for an operator's change", () => {
    const sent: Array<string | null> = [];
    new WakeCoalescer("ns", 0, new StepScheduler(), ({ except }) => sent.push(except)).notify([]);
    expect(sent).toEqual([""]);
  });

  it("gathers the window's writing users and operator changes into its round", () => {
    const scheduler = new StepScheduler();
    const rounds: Array<{ users: string[]; everyone: boolean }> = [];
    const coalescer = new WakeCoalescer("ns", 20, scheduler, ({ users, everyone }) =>
      rounds.push({ users: [...users], everyone }),
    );
    coalescer.notify(["a"], { user: "alice" });
    coalescer.notify(["b"], { user: "bob" });
    coalescer.notify([], { everyone: true });
    scheduler.fire();
    coalescer.notify(["c"]);
    scheduler.fire();
    expect(rounds).toEqual([
      { users: ["alice"], everyone: false },
      { users: ["bob"], everyone: true },
      { users: [], everyone: false },
    ]);
  });
});
