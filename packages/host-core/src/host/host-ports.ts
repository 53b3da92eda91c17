import type { RequestRecord } from "../http/request-record.js";
import type { IngestEvent } from "../ingest/namespace-ingest.js";
import type { CounterFlushPolicy } from "../namespace/counter-flush.js";
import type { Clock } from "../ports/clock.js";
import type { Logger } from "../ports/logger.js";
import type { QuotaStore } from "../ports/quota-store.js";
import type { Scheduler } from "../ports/scheduler.js";
import type { Storage } from "../ports/storage.js";
import type { Wake } from "../ports/wake.js";

/** What a host gives host-core besides the engine: the ports of its runtime. */
export interface HostPorts {
  storage: Storage;
  scheduler: Scheduler;
  wake: Wake;
  clock?: Clock;
  logger?: Logger;
  /** Where users' spends are kept (shared by every process that shares it); memory by default. */
  quotaStore?: QuotaStore;
  /** Sees every request's record (for metrics). */
  observe?(record: RequestRecord): void;
  /** The process's memory figures for the status route (Node: `process.memoryUsage()`). */
  memory?(): Record<string, number>;
  /** Keeps work that outlives its response alive (Workers' `ctx.waitUntil`); tracked by default. */
  waitUntil?(promise: Promise<unknown>): void;
  /** When namespaces store their counters (default: at most 5 s after they changed). */
  counterFlush?: CounterFlushPolicy;
  /**
   * The timer of upstream polls while wake sockets are open (default: a `TimerScheduler`). A host
   * whose timers outlive the process (a Durable Object's alarm) may call the namespace's `poll()`
   * when one is due instead of the task it was given.
   */
  pollScheduler?: Scheduler;
  /** Sees every ingest pass (for metrics). */
  observeIngest?(event: IngestEvent): void;
}
