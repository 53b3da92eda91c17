import type { Engine } from "@weir/engine-wasm";
import type { UpstreamSource } from "@weir/protocol";
import type { ResolvedConfig } from "../config/weir-config.js";
import type { IngestEvent } from "../ingest/namespace-ingest.js";
import type { TableInfo } from "../mutators/column-codec.js";
import type { Clock } from "../ports/clock.js";
import type { Logger } from "../ports/logger.js";
import type { Scheduler } from "../ports/scheduler.js";
import type { NamespaceStore } from "../ports/storage.js";
import type { Wake } from "../ports/wake.js";
import type { ZeroMeter } from "../zero/zero-meter.js";
import type { CounterFlushPolicy } from "./counter-flush.js";

/** What a host gives a namespace service: its database, engine, config, and the host's ports. */
export interface NamespaceServiceInit {
  namespace: string;
  hash: string;
  store: NamespaceStore;
  engine: Engine;
  config: ResolvedConfig;
  tables: Map<string, TableInfo>;
  scheduler: Scheduler;
  wake: Wake;
  clock: Clock;
  logger: Logger;
  counterFlush: CounterFlushPolicy;
  memory?(): Record<string, number>;
  waitUntil(promise: Promise<unknown>): void;
  /** The namespace's upstream (config.upstream's source for it), null without one. */
  upstream: UpstreamSource | null;
  /** The timer of upstream polls (apart from `scheduler`, which the wake window uses). */
  pollScheduler: Scheduler;
  observeIngest?(event: IngestEvent): void;
  /** Charges Zero sockets' messages to their users' budgets (none: they cost nothing). */
  zeroMeter?: ZeroMeter;
}
