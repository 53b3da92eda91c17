import type { Dialect, Engine, Visibility } from "@weir/engine-wasm";
import { type AdminAction, runAdmin } from "./admin-flow.js";
import type { Claims } from "./claims.js";
import type { TableInfo } from "./column-codec.js";
import type { ResolvedConfig } from "./config.js";
import { ControlStore } from "./control-store.js";
import { FaultError } from "./fault.js";
import type { Clock } from "./ports/clock.js";
import type { Logger } from "./ports/logger.js";
import type { Scheduler } from "./ports/scheduler.js";
import type { NamespaceStore } from "./ports/storage.js";
import type { Wake } from "./ports/wake.js";
import { runPull } from "./pull-flow.js";
import { runPush } from "./push-flow.js";
import type { RequestRecord } from "./request-record.js";
import { WakeCoalescer } from "./wake-coalescer.js";

/** What a flow answers: the response and the fields it adds to the request's log line. */
export interface FlowResult {
  response: Response;
  log: Partial<RequestRecord>;
}

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
  waitUntil(promise: Promise<unknown>): void;
}

/**
 * One namespace: its database, knobs, counters and wake window, and the flows that run on them.
 * Flows are synchronous between reading the body and answering, so one namespace's transactions
 * never interleave.
 */
export class NamespaceService {
  readonly namespace: string;
  /** The namespace as it appears in logs. */
  readonly hash: string;
  readonly store: NamespaceStore;
  readonly engine: Engine;
  readonly config: ResolvedConfig;
  readonly tables: Map<string, TableInfo>;
  readonly control: ControlStore;
  readonly wake: Wake;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly waitUntil: (promise: Promise<unknown>) => void;
  private readonly coalescer: WakeCoalescer;
  /** Requests being served, so an idle close never pulls the database from under one. */
  active = 0;
  lastUsed: number;
  private closed = false;

  constructor(init: NamespaceServiceInit) {
    this.namespace = init.namespace;
    this.hash = init.hash;
    this.store = init.store;
    this.engine = init.engine;
    this.config = init.config;
    this.tables = init.tables;
    this.wake = init.wake;
    this.clock = init.clock;
    this.logger = init.logger;
    this.waitUntil = init.waitUntil;
    this.lastUsed = init.clock.monotonic();
    this.store.transaction(() => this.engine.install(this.store.db, this.config.schema));
    this.control = ControlStore.open(this.store);
    this.coalescer = new WakeCoalescer(init.namespace, init.config.wakeWindowMs, init.scheduler, (except) => {
      this.control.counters.wakeFrames += this.wake.send(this.namespace, except);
    });
  }

  get counters() {
    return this.control.counters;
  }

  /** The effective change-log retention: the admin knob, else the config. */
  get retainChanges(): number {
    return this.control.knobs.retainChanges ?? this.config.retainChanges;
  }

  /** The visibility filters for these claims, unless an operator switched visibility off. */
  visibilityFor(claims: Claims): Visibility | undefined {
    if (!this.config.visibility || !this.control.knobs.visibilityEnabled) return undefined;
    return this.config.visibility(claims);
  }

  pull(dialect: Dialect, body: unknown, claims: Claims): FlowResult {
    return this.guard(() => runPull(this, dialect, body, claims));
  }

  push(dialect: Dialect, body: unknown, claims: Claims): FlowResult {
    return this.guard(() => runPush(this, dialect, body, claims));
  }

  admin(action: AdminAction, method: string, body: unknown): FlowResult {
    return runAdmin(this, action, method, body);
  }

  /** Wakes the other clients after a commit by these writers. */
  committed(writers: Iterable<string>): void {
    this.coalescer.notify(writers);
  }

  /** Runs effects queued with `tx.defer`, after their commit; a failing one is logged, not thrown. */
  runDeferred(effects: Array<() => void | Promise<void>>): void {
    for (const effect of effects) {
      const run = Promise.resolve()
        .then(effect)
        .catch((error: unknown) => {
          this.logger.log("error", { msg: "deferred effect failed", ns: this.hash, error: String(error) });
        });
      this.waitUntil(run);
    }
  }

  /** Stores the counters and closes the database. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.coalescer.cancel();
    try {
      this.control.saveCounters();
    } finally {
      this.store.close();
    }
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** A fired fault is one-shot: disarm it (in its own transaction, as the flow's rolled back). */
  private guard(flow: () => FlowResult): FlowResult {
    try {
      return flow();
    } catch (error) {
      if (error instanceof FaultError) this.control.disarm(error.point);
      throw error;
    }
  }
}
