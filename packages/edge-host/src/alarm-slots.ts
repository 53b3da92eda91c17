import type { Scheduler } from "@weir/host-core";
import { OBJECT_TABLE } from "./object-binding.js";

/** What the object's one alarm serves: the config's alarm task, and upstream polls. */
export type AlarmSlot = "task" | "poll";

/**
 * The object's alarm, shared by its slots: each slot's next time is stored in the object's table
 * (so it survives eviction), and the alarm is set to the earliest of them.
 */
export class AlarmSlots {
  constructor(private readonly storage: DurableObjectStorage) {}

  /**
   * A slot's next time (epoch ms): null when it has none, undefined when none was ever stored (an
   * object whose alarm an earlier version set for its task alone).
   */
  get(slot: AlarmSlot): number | null | undefined {
    const row = this.storage.sql
      .exec<{ value: string }>(`SELECT value FROM ${OBJECT_TABLE} WHERE key = ?`, `alarm:${slot}`)
      .toArray()[0];
    return row === undefined ? undefined : (JSON.parse(row.value) as number | null);
  }

  /** Stores a slot's next time (null: none) and sets the alarm to the earliest. */
  async set(slot: AlarmSlot, at: number | null): Promise<void> {
    this.storage.sql.exec(
      `INSERT INTO ${OBJECT_TABLE} (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
      `alarm:${slot}`,
      JSON.stringify(at),
    );
    await this.arm();
  }

  /** Sets the alarm to the earliest slot's time, or deletes it when no slot has one. */
  async arm(): Promise<void> {
    const times = (["task", "poll"] as const)
      .map((slot) => this.get(slot))
      .filter((at): at is number => typeof at === "number");
    if (times.length === 0) await this.storage.deleteAlarm();
    else await this.storage.setAlarm(Math.min(...times));
  }

  /**
   * host-core's poll timer over the alarm. The task it is given lives only as long as the object
   * in memory, so the alarm calls the namespace's `poll()` instead.
   */
  pollScheduler(onError: (error: unknown) => void): Scheduler {
    return {
      schedule: (_namespace, delayMs) => {
        this.set("poll", Date.now() + delayMs).catch(onError);
      },
      cancel: () => {
        this.set("poll", null).catch(onError);
      },
    };
  }
}
