import type { Engine, Schema } from "@weir/engine-wasm";
import type { UpstreamSource } from "@weir/protocol";
import type { ControlStore } from "../namespace/control-store.js";
import type { Clock } from "../ports/clock.js";
import type { Logger } from "../ports/logger.js";
import type { Scheduler } from "../ports/scheduler.js";
import type { NamespaceStore } from "../ports/storage.js";
import { CommitSignal } from "./commit-signal.js";
import type { IngestBreaker } from "./ingest-breaker.js";
import type { IngestBudget, IngestPassResult } from "./ingest-pass.js";
import { PassProgress } from "./pass-progress.js";
import { PassQueue } from "./pass-queue.js";
import { type IngestEvent, PassReport } from "./pass-report.js";
import {
  assertIngestNotStopped,
  type IngestRecord,
  ingestRecord,
  liftStopForNewSchema,
  runRecordedIngestPass,
  storedBreaker,
  updateIngestRecord,
} from "./recorded-ingest-pass.js";
import type { ResolvedUpstream } from "./upstream-config.js";

export type { IngestEvent } from "./pass-report.js";
export type { IngestRecord } from "./recorded-ingest-pass.js";

export interface NamespaceIngestInit {
  namespace: string;
  hash: string;
  engine: Engine;
  store: NamespaceStore;
  schema: Schema;
  source: UpstreamSource;
  upstream: ResolvedUpstream;
  control: ControlStore;
  clock: Clock;
  logger: Logger;
  /** The timer of the polls while wake sockets are open. */
  scheduler: Scheduler;
  wakeSockets(): number;
  /** After a transaction that committed a version: wake the clients. */
  committed(): void;
  /** A pass starts and ends using the namespace (so it is not closed under it). */
  enter(): void;
  leave(): void;
  waitUntil(promise: Promise<unknown>): void;
  observe?(event: IngestEvent): void;
}

/**
 * One namespace's ingest from its upstream: one pass at a time (callers that come while one runs
 * share the next), a fencing token claimed when the namespace opened, the breaker and the
 * attempts stored in the namespace's database, and polls while wake sockets are open.
 */
export class NamespaceIngest {
  private readonly breaker: IngestBreaker;
  private readonly fence: number;
  private readonly report: PassReport;
  private readonly passes = new PassQueue((resnapshot, budget) => this.start(resnapshot, budget));
  /** When a pass last completed (monotonic ms), for freshness. */
  private freshAt = Number.NEGATIVE_INFINITY;
  /**
   * Polls while wake sockets are open: `off` ──watch──▶ `polling` ──no sockets left──▶ `off`;
   * either ──close──▶ `closed`, for good.
   */
  private watching: "off" | "polling" | "closed" = "off";
  /** catchUp calls waiting for the upstream to commit more. */
  private readonly commits = new CommitSignal();
  /** What the running pass did so far. */
  private current = new PassProgress(null, 0);

  constructor(private readonly init: NamespaceIngestInit) {
    const { control, clock, store, engine } = init;
    this.report = new PassReport(
      init.logger,
      init.hash,
      () => {
        const caughtUpAt = this.record.caughtUpAt;
        return caughtUpAt === null ? null : Math.max(0, clock.now() - caughtUpAt);
      },
      init.observe,
    );
    const lifted = liftStopForNewSchema(control, init.schema);
    if (lifted) {
      init.logger.log("info", {
        msg: "ingest resumed: the schema changed since it stopped for drift",
        ns: init.hash,
        stopped: lifted.message,
      });
    }
    this.breaker = storedBreaker(control, init.upstream.breaker, clock.now());
    // Fresh since the last pass that caught up, as stored: a restart does not force a pass.
    const caughtUpAt = this.record.caughtUpAt;
    if (caughtUpAt !== null) this.freshAt = clock.monotonic() - Math.max(0, clock.now() - caughtUpAt);
    // The holder of the namespace (the Node server under its file lease, the Durable Object)
    // claims a newer token: a stale holder's late writes are refused by the engine.
    this.fence = store.transaction(() => engine.claimFence(store.db));
  }

  private get record(): IngestRecord {
    return ingestRecord(this.init.control);
  }

  private update(change: Partial<IngestRecord>): void {
    updateIngestRecord(this.init.control, change);
  }

  /**
   * A pass that starts now, or, while one runs, the next one (shared by every caller meanwhile):
   * what the upstream committed before the call is applied once it resolves. Rejects with
   * BreakerOpenError while the breaker is open, IngestStoppedError after schema drift, or the
   * upstream's refusal.
   */
  run(options: { resnapshot?: boolean; budget?: IngestBudget } = {}): Promise<IngestPassResult> {
    return this.passes.run(options.resnapshot === true, options.budget);
  }

  private get closed(): boolean {
    return this.watching === "closed";
  }

  /** A pass for notify or the admin routes: answered within `upstream.answerWithinMs`. */
  answer(options: { resnapshot?: boolean }): Promise<IngestPassResult> {
    return this.runWithin(options, this.init.upstream.answerWithinMs);
  }

  /**
   * A pass (see `run`), answered within `waitMs`: a pass still running then goes on in the
   * background, and what it did so far is answered, as `pending_retry` while it waits to call
   * the upstream again after a failure, else as `wall_budget_exceeded`.
   */
  async runWithin(options: { resnapshot?: boolean }, waitMs: number): Promise<IngestPassResult> {
    const pass = this.run(options);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<null>((resolve) => {
      timer = setTimeout(() => resolve(null), waitMs);
    });
    try {
      const first = await Promise.race([pass, late]);
      if (first !== null) return first;
    } finally {
      clearTimeout(timer);
    }
    // Its end is logged and recorded by the pass itself.
    pass.catch(() => undefined);
    return this.sofar();
  }

  /** The running pass's result so far. */
  private sofar(): IngestPassResult {
    const { engine, store } = this.init;
    return this.current.result(
      store.transaction(() => engine.upstreamState(store.db)),
      this.record.attempts,
    );
  }

  /**
   * Before a pull or push: null while the last pass is fresh, while a pass is already running
   * (its rows land soon; a snapshot generation may take long), or while ingest is paused or
   * stopped. Else a pass starts, and the promise settles once it did or after `freshnessWaitMs`,
   * whichever is first. It never rejects: a failing upstream leaves the replica as it is.
   */
  freshen(): Promise<void> | null {
    const { upstream, clock } = this.init;
    if (this.closed || this.passes.running || clock.monotonic() - this.freshAt < upstream.freshnessMs)
      return null;
    if (this.record.stopped || this.breakerOpen()) return null;
    const pass = this.run().then(
      () => undefined,
      () => undefined,
    );
    if (upstream.freshnessWaitMs === 0) return null;
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, upstream.freshnessWaitMs);
      pass.then(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /**
   * Passes that start after this call, until the cursor reaches `watermark` (one pass without
   * one) or `waitMs` passed: what a writer committed upstream is then in the namespace. Rejects
   * with what stopped a pass, or a TimeoutError naming how far it got.
   */
  async catchUp(watermark: bigint | undefined, waitMs: number): Promise<void> {
    const { clock } = this.init;
    const deadline = clock.monotonic() + waitMs;
    for (;;) {
      // A pass that retries a failing upstream goes on past the deadline, but not the wait.
      const result = await this.runWithin({}, Math.max(1, deadline - clock.monotonic()));
      const reached =
        result.cursorAfter !== null && (watermark === undefined || BigInt(result.cursorAfter) >= watermark);
      if (result.outcome === "complete" && (reached || watermark === undefined)) return;
      if (clock.monotonic() >= deadline || this.closed) {
        const error = new Error(
          `ingest reached ${result.cursorAfter ?? "nothing"}, not ${watermark ?? "a complete pass"}, in ${waitMs} ms (${result.outcome}${result.error ? `: ${result.error}` : ""})`,
        );
        error.name = "TimeoutError";
        throw error;
      }
      // The upstream may not have the writes yet (its replication lags the app's commit): look
      // again once it says it committed more (an in-process notify), or after 20 ms.
      await this.commits.next(20);
    }
  }

  /**
   * The upstream committed changes for this namespace while it was not open: the stored last
   * pass is not fresh, so the next pull or push ingests first.
   */
  committedWhileClosed(): void {
    this.freshAt = Number.NEGATIVE_INFINITY;
  }

  /** The upstream committed (the host's in-process notify): a catchUp waiting for it looks again. */
  upstreamMoved(): void {
    this.commits.moved();
  }

  /** A wake socket opened: poll while any is open. */
  watch(): void {
    if (this.watching !== "off") return;
    this.watching = "polling";
    this.schedule(this.init.upstream.pollMs);
  }

  /**
   * One poll: a pass while wake sockets are open, then the next poll (after the breaker's retry
   * time when it is open). Hosts whose timers outlive the process (a Durable Object's alarm)
   * call it when the time comes.
   */
  async poll(): Promise<void> {
    if (this.closed) return;
    if (this.init.wakeSockets() === 0) {
      this.watching = "off";
      return;
    }
    this.watching = "polling";
    if (!this.record.stopped && !this.breakerOpen()) await this.run().catch(() => undefined);
    if (this.closed) return;
    const open = this.breaker.current.open;
    const delay = open
      ? Math.max(this.init.upstream.pollMs, open.retryAt - this.init.clock.now())
      : this.init.upstream.pollMs;
    this.schedule(delay);
  }

  /**
   * Closes the breaker with a fresh window and clears a stop (an operator's reopen). With
   * `resnapshot`, a new snapshot generation is queued in the same step, before any pull or poll
   * can start a pass of plain changes: buffered changes from before the fix are then never
   * applied (the generation's catch-up starts after its first page).
   */
  reopen(options: { resnapshot?: boolean } = {}): {
    wasOpen: boolean;
    pass: Promise<IngestPassResult> | null;
  } {
    const wasOpen = this.breaker.current.open !== null || this.record.stopped !== null;
    this.breaker.close(this.init.clock.now(), true);
    if (this.record.stopped) this.update({ stopped: null });
    return { wasOpen, pass: options.resnapshot ? this.run({ resnapshot: true }) : null };
  }

  /** Why ingest stopped itself (schema drift) until an operator reopens it, or null. */
  get stoppedCode(): string | null {
    return this.record.stopped?.code ?? null;
  }

  /** The pass in progress, if one is (a closing host waits for it). */
  get inProgress(): Promise<unknown> | null {
    return this.passes.running;
  }

  /** Stops polling; a pass in progress stops at its next step. */
  close(): void {
    this.watching = "closed";
    this.init.scheduler.cancel(this.init.namespace);
  }

  /** For the status route. */
  status(): Record<string, unknown> {
    const { engine, store, clock } = this.init;
    const state = store.transaction(() => engine.upstreamState(store.db));
    const record = this.record;
    return {
      cursor: state.cursor,
      fence: state.fence,
      generation: state.generation,
      snapshot: state.snapshot,
      lagMs: record.caughtUpAt === null ? null : Math.max(0, clock.now() - record.caughtUpAt),
      breaker: this.breaker.current,
      attempts: record.attempts,
      lastPass: record.lastPass,
      stopped: record.stopped,
      quarantined: record.quarantined ?? { rows: 0, last: null },
      running: this.passes.running !== null,
      polling: this.watching === "polling",
    };
  }

  private breakerOpen(): boolean {
    const open = this.breaker.current.open;
    return open !== null && this.init.clock.now() < open.retryAt;
  }

  private schedule(delayMs: number): void {
    this.init.scheduler.schedule(this.init.namespace, delayMs, () => {
      this.init.waitUntil(this.poll());
    });
  }

  /** Starts a pass (the PassQueue's only way to): a host that outlives requests waits for it. */
  private start(resnapshot: boolean, budget?: IngestBudget): Promise<IngestPassResult> {
    const pass = this.pass(resnapshot, budget);
    const settled = pass.then(
      (result) => {
        if (result.outcome === "pending_retry" && result.retryAt !== undefined)
          this.retryLater(result.retryAt);
      },
      () => undefined,
    );
    this.init.waitUntil(settled);
    return pass;
  }

  /**
   * A pass that ended waiting to retry the upstream goes on by itself at its retry time (polls,
   * while wake sockets are open, already do), so a caller answered early loses nothing.
   */
  private retryLater(at: number): void {
    if (this.watching !== "off") return;
    this.init.scheduler.schedule(this.init.namespace, Math.max(0, at - this.init.clock.now()), () => {
      if (this.watching !== "off" || this.passes.running) return;
      this.init.waitUntil(
        this.run().then(
          () => undefined,
          () => undefined,
        ),
      );
    });
  }

  private async pass(resnapshot: boolean, budget?: IngestBudget): Promise<IngestPassResult> {
    const { engine, store, schema, source, upstream, clock, control } = this.init;
    assertIngestNotStopped(control);
    this.init.enter();
    const current = new PassProgress(
      store.transaction(() => engine.upstreamState(store.db)).cursor,
      this.record.attempts,
    );
    this.current = current;
    try {
      const result = await runRecordedIngestPass(control, {
        engine,
        store,
        schema,
        source,
        fence: this.fence,
        breaker: this.breaker,
        now: () => clock.now(),
        monotonic: () => clock.monotonic(),
        sleep: (ms) => this.sleep(ms),
        random: Math.random,
        resnapshot,
        changesLimit: upstream.changesLimit,
        pageRows: upstream.pageRows,
        ...(budget ? { budget } : {}),
        onCommitted: () => this.init.committed(),
        onQuarantined: (rows) => this.report.quarantined(rows),
        ...current.hooks(),
        stopped: () => this.closed,
      });
      if (result.outcome === "complete") this.freshAt = clock.monotonic();
      this.report.ended(result, this.closed);
      return result;
    } catch (error) {
      this.report.threw(error);
      throw error;
    } finally {
      this.init.leave();
    }
  }

  /** Waits before a retry; a closing namespace cuts the wait short (the pass then stops). */
  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const started = this.init.clock.monotonic();
      const tick = () => {
        if (this.closed || this.init.clock.monotonic() - started >= ms) resolve();
        else setTimeout(tick, Math.min(100, ms));
      };
      setTimeout(tick, Math.min(100, ms));
    });
  }
}
