import type { Engine, SqlAdapter, Visibility } from "@weir/engine-wasm";
import type { Dialect } from "@weir/protocol";
import { type AdminAction, runAdmin } from "./admin-flow.js";
import { CaughtUpPulls } from "./caught-up-pulls.js";
import type { Claims } from "./claims.js";
import type { TableInfo } from "./column-codec.js";
import type { ResolvedConfig } from "./config.js";
import { ControlStore } from "./control-store.js";
import { FaultError } from "./fault.js";
import type { ResponseParts } from "./http-parts.js";
import type { Clock } from "./ports/clock.js";
import type { Logger } from "./ports/logger.js";
import type { Scheduler } from "./ports/scheduler.js";
import type { NamespaceStore } from "./ports/storage.js";
import type { Wake } from "./ports/wake.js";
import { runPull } from "./pull-flow.js";
import { runPush } from "./push-flow.js";
import type { RequestRecord } from "./request-record.js";
import { WakeCoalescer } from "./wake-coalescer.js";

/** How many change-log rows one retention pass deletes at most, so a push never stalls on it. */
const PRUNE_BATCH = 10_000;
const PRUNE_EVERY_MAX = 1_000;
const COUNTER_SAVE_INTERVAL_MS = 5_000;

/** What a flow answers: the response and the fields it adds to the request's log line. */
export interface FlowResult {
  response: ResponseParts;
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
  memory?(): Record<string, number>;
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
  readonly memory: () => Record<string, number>;
  /** Caught-up pulls answered from memory; forgotten by every transaction of `store`. */
  readonly caughtUp = new CaughtUpPulls();
  private readonly coalescer: WakeCoalescer;
  /** Requests being served, so an idle close never pulls the database from under one. */
  active = 0;
  lastUsed: number;
  /** Taken out of service (its engine or database failed): closed once no request uses it. */
  retired = false;
  /** Its database failed as corrupt: closed untouched. */
  damaged = false;
  private closed = false;
  private versionsSincePrune = 0;
  private countersSavedAt: number;

  constructor(init: NamespaceServiceInit) {
    this.namespace = init.namespace;
    this.hash = init.hash;
    this.store = forgetOnTransaction(init.store, this.caughtUp);
    this.engine = init.engine;
    this.config = init.config;
    this.tables = init.tables;
    this.wake = init.wake;
    this.clock = init.clock;
    this.logger = init.logger;
    this.waitUntil = init.waitUntil;
    this.memory = init.memory ?? (() => ({}));
    this.lastUsed = init.clock.monotonic();
    this.countersSavedAt = this.lastUsed;
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

  /** Stores the counters now and then, so that a crash loses at most a few seconds of them. */
  private saveCountersNowAndThen(): void {
    const now = this.clock.monotonic();
    if (now - this.countersSavedAt < COUNTER_SAVE_INTERVAL_MS) return;
    this.countersSavedAt = now;
    try {
      this.control.saveCounters();
    } catch (error) {
      this.logger.log("error", { msg: "saving counters failed", ns: this.hash, error: String(error) });
    }
  }

  admin(action: AdminAction, method: string, body: unknown): FlowResult {
    return runAdmin(this, action, method, body);
  }

  /**
   * Retention after pushes. A pass costs a look through the change log, so it runs once the log
   * has grown by a hundredth of what it keeps (at least every version for tiny retentions, at
   * most every PRUNE_EVERY_MAX versions), and again at once while a pass left work behind.
   */
  retention(newVersions: number): void {
    this.versionsSincePrune += newVersions;
    const every = Math.min(PRUNE_EVERY_MAX, Math.max(1, Math.ceil(this.retainChanges / 100)));
    if (this.versionsSincePrune < every) return;
    try {
      const result = this.store.transaction(() =>
        this.engine.prune(this.store.db, this.retainChanges, PRUNE_BATCH),
      );
      this.versionsSincePrune = result.more ? every : 0;
    } catch (error) {
      // The push already committed; a failed pass is retried after the next one.
      this.logger.log("error", { msg: "retention failed", ns: this.hash, error: String(error) });
    }
  }

  /**
   * Writes to the modelled tables outside a push (an alarm task, the host's own jobs): runs `fn`
   * in a transaction that then commits what it wrote as one new version, so incremental pulls see
   * it, and wakes every client. Answers what `fn` answered.
   */
  write<T>(fn: (db: SqlAdapter) => T): T {
    const { result, committed } = this.store.transaction(() => {
      const result = fn(this.store.db);
      return { result, committed: this.engine.commit(this.store.db).committed };
    });
    if (committed) this.committed([]);
    return result;
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

  /**
   * Stores the counters and closes the database, telling the store the watermark it closed at.
   * A `damaged` database (it failed as corrupt) is closed untouched.
   */
  close(damaged = false): void {
    if (this.closed) return;
    this.closed = true;
    this.coalescer.cancel();
    if (damaged) {
      this.store.close({ damaged: true });
      return;
    }
    let watermark: number | undefined;
    try {
      this.control.saveCounters();
      watermark = this.engine.state(this.store.db).watermark;
    } finally {
      this.store.close(watermark === undefined ? {} : { watermark });
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
    } finally {
      this.saveCountersNowAndThen();
    }
  }
}

/** The store, with every transaction first making the caught-up answers forget what they know. */
function forgetOnTransaction(store: NamespaceStore, caughtUp: CaughtUpPulls): NamespaceStore {
  return {
    db: store.db,
    transaction(fn) {
      caughtUp.forget();
      return store.transaction(fn);
    },
    ...(store.sizeBytes ? { sizeBytes: () => store.sizeBytes!() } : {}),
    ...(store.location === undefined ? {} : { location: store.location }),
    close: (outcome) => store.close(outcome),
  };
}
