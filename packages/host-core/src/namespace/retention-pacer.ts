import type { Engine, SqlAdapter } from "@weir/engine-wasm";
import type { Logger } from "../ports/logger.js";

/** How many change-log rows one retention pass deletes at most, so a push never stalls on it. */
const PRUNE_BATCH = 10_000;
const PRUNE_EVERY_MAX = 1_000;

export interface RetentionPacerInit {
  engine: Engine;
  store: { db: SqlAdapter; transaction<T>(fn: () => T): T };
  /** The change-log rows to keep (the admin knob, else the config), read at each pass. */
  retainChanges: () => number;
  logger: Logger;
  hash: string;
}

/**
 * Retention after pushes. A pass costs a look through the change log, so it runs once the log
 * has grown by a hundredth of what it keeps (at least every version for tiny retentions, at most
 * every PRUNE_EVERY_MAX versions), and again at once while a pass left work behind.
 */
export class RetentionPacer {
  private versionsSincePrune = 0;

  constructor(private readonly init: RetentionPacerInit) {}

  /** `newVersions` were committed. */
  committed(newVersions: number): void {
    const { engine, store } = this.init;
    this.versionsSincePrune += newVersions;
    const retain = this.init.retainChanges();
    const every = Math.min(PRUNE_EVERY_MAX, Math.max(1, Math.ceil(retain / 100)));
    if (this.versionsSincePrune < every) return;
    try {
      const result = store.transaction(() => engine.prune(store.db, retain, PRUNE_BATCH));
      this.versionsSincePrune = result.more ? every : 0;
    } catch (error) {
      // The push already committed; a failed pass is retried after the next one.
      this.init.logger.log("error", { msg: "retention failed", ns: this.init.hash, error: String(error) });
    }
  }
}
