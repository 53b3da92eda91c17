import { type Engine, QueryPages, RangeSizes, type SqlAdapter } from "@weir/engine-wasm";
import type { AdminAction, Dialect } from "@weir/protocol";
import type { Claims } from "../auth/claims.js";
import { runDelegatedPush } from "../delegate/delegated-push-flow.js";
import { runAdmin } from "../flows/admin-flow.js";
import { CaughtUpPulls } from "../flows/caught-up-pulls.js";
import { FaultError } from "../flows/fault.js";
import type { FlowResult, NamespaceData } from "../flows/flow-context.js";
import { runPagedPull } from "../flows/paged-pull.js";
import { type PullFlowResult, runPull } from "../flows/pull-flow.js";
import type { RecordWith } from "../flows/push-answers.js";
import { runPush } from "../flows/push-flow.js";
import { MAX_PUTS_PER_STEP, PutSlice } from "../flows/put-slice.js";
import { runSlicedPull } from "../flows/sliced-pull.js";
import { HttpError } from "../http/http-error.js";
import { type IngestAction, runIngestAdmin, runNotify } from "../ingest/ingest-flow.js";
import type { IngestPassResult } from "../ingest/ingest-pass.js";
import type { NamespaceIngest } from "../ingest/namespace-ingest.js";
import type { Clock } from "../ports/clock.js";
import type { Logger } from "../ports/logger.js";
import type { NamespaceStore } from "../ports/storage.js";
import { ZeroGroupStore } from "../zero/zero-group-store.js";
import { ZeroHub } from "../zero/zero-hub.js";
import type { ZeroNamespace } from "../zero/zero-namespace.js";
import { ControlStore } from "./control-store.js";
import { CounterFlush } from "./counter-flush.js";
import { runDeferredEffects } from "./deferred-effects.js";
import { DeferredInstall } from "./deferred-install.js";
import {
  assembleContexts,
  changeCaps,
  cursorReader,
  type FlowContexts,
  forwardingPart,
  ingestPart,
  knobWriter,
  queryReads,
  retainChanges,
} from "./flow-contexts.js";
import { installNamespace } from "./install-namespace.js";
import type { NamespaceServiceInit } from "./namespace-service-init.js";
import { NamespaceUsage } from "./namespace-usage.js";
import { RetentionPacer } from "./retention-pacer.js";
import { upstreamParts } from "./upstream-parts.js";
import { type CommitScope, WakeCoalescer } from "./wake-coalescer.js";
import { WakeRouter } from "./wake-router.js";
import { zeroNamespace, zeroReauthenticate } from "./zero-parts.js";

/**
 * One namespace: its database, knobs, counters and wake window, and the flows that run on them.
 * A flow never sees the service: each takes a context, which the service assembles once from
 * parts of what it owns (`flow-contexts.ts`). Flows are synchronous between reading the body and
 * answering, so one namespace's transactions never interleave.
 */
export class NamespaceService {
  readonly namespace: string;
  /** The namespace as it appears in logs. */
  readonly hash: string;
  readonly store: NamespaceStore;
  readonly engine: Engine;
  readonly clock: Clock;
  /** Caught-up pulls answered from memory; forgotten by every transaction of `store`. */
  readonly caughtUp = new CaughtUpPulls();
  /** Each flow's context (and Zero's view of the namespace), assembled from parts. */
  readonly contexts: FlowContexts & { readonly zero: ZeroNamespace };
  private readonly control: ControlStore;
  private readonly logger: Logger;
  private readonly waitUntil: (promise: Promise<unknown>) => void;
  private readonly coalescer: WakeCoalescer;
  /** The namespace's Zero connections (Zero's sync protocol over WebSocket). */
  readonly zero: ZeroHub;
  /** What the Zero dialect keeps of each client group with the data (ZeroNamespace). */
  readonly zeroStore: ZeroGroupStore;
  private readonly counterFlush: CounterFlush;
  /** Ingest from the upstream, when the namespace has one. */
  private readonly ingester: NamespaceIngest | null;
  /** Requests being served, so an idle close never pulls the database from under one. */
  readonly usage: NamespaceUsage;
  private readonly retentionPacer: RetentionPacer;
  /** How many new queries each step of a native pull's query patch evaluates (sliced-pull.ts). */
  private readonly pullSteps: PutSlice;
  /** How long one slice of a push holds the thread (push-flow.ts). */
  private readonly pushSliceMs: number;
  private closed = false;
  /** The install a new namespace defers until it is first written; null if it was installed on open. */
  private readonly deferred: DeferredInstall | null;

  constructor(init: NamespaceServiceInit) {
    const { config, clock, logger } = init;
    this.namespace = init.namespace;
    this.hash = init.hash;
    const install = () => installNamespace(this.engine, this.store, config, logger, this.hash);
    this.deferred = init.engine.isPristine(init.store.db) ? new DeferredInstall(init.store, install) : null;
    const store = this.caughtUp.forgettingStore(this.deferred?.store ?? init.store);
    this.store = store;
    const engine = this.deferred?.installing(init.engine) ?? init.engine;
    this.engine = engine;
    this.clock = clock;
    this.logger = logger;
    this.waitUntil = init.waitUntil;
    this.pullSteps = new PutSlice(MAX_PUTS_PER_STEP, config.querySliceMs);
    this.pushSliceMs = config.pushSliceMs;
    this.usage = new NamespaceUsage(clock);
    if (!this.deferred) store.transaction(install);
    const control = this.deferred ? ControlStore.fresh(store) : ControlStore.open(store);
    this.control = control;
    const data: NamespaceData = {
      namespace: init.namespace,
      engine,
      store,
      caughtUp: this.caughtUp,
      knobs: control.knobs,
      counters: control.counters,
      clock,
      pristine: () => this.deferred?.pending === true,
    };
    const retain = retainChanges(config, control);
    const upstreamCursor = cursorReader(engine, store);
    const wakeSockets = () => init.wake.count(init.namespace);
    this.zeroStore = new ZeroGroupStore(store);
    this.counterFlush = new CounterFlush(init.counterFlush, () => this.saveCounters(), this.usage.lastUsed);
    const pacing = { engine, store, retainChanges: retain, logger, hash: this.hash };
    this.retentionPacer = new RetentionPacer(pacing);
    const { ingester, delegate } = upstreamParts({
      ...init,
      source: init.upstream,
      store,
      control,
      wakeSockets,
      committed: () => this.committed([]),
      enter: () => this.enter(),
      leave: () => this.leave(),
      upstreamCursor,
    });
    this.ingester = ingester;
    // The namespace's pulls and pokes page alike, and learn its queries' range sizes together.
    const ranges = new RangeSizes();
    const queryPages = () => new QueryPages({ pageMs: config.queryPageMs, ranges });
    const flows = assembleContexts({
      data,
      knobs: knobWriter(control),
      queries: queryReads(config, control, queryPages),
      mutators: { store, mutators: config.mutators, tables: init.tables },
      commits: {
        committed: (writers, scope) => this.committed(writers, scope),
        runDeferred: (effects) => this.runDeferred(effects),
        retention: (newVersions) => this.retentionPacer.committed(newVersions),
      },
      status: {
        retainChanges: retain,
        caps: changeCaps(config),
        wakeSockets,
        sizeBytes: () => store.sizeBytes?.() ?? null,
        memory: init.memory ?? (() => ({})),
        upstreamStatus: () => ingester?.status() ?? null,
      },
      ingest: ingestPart(ingester, upstreamCursor),
      forwarding: forwardingPart(delegate),
    });
    const zero = zeroNamespace(this, {
      config,
      engine,
      store,
      zeroStore: this.zeroStore,
      delegates: !!delegate,
      install: () => this.deferred?.install(),
      queryPages,
    });
    this.contexts = { ...flows, zero };
    this.zero = new ZeroHub(
      zero,
      logger,
      zeroReauthenticate(config, logger),
      init.zeroMeter,
      new PutSlice(MAX_PUTS_PER_STEP, config.querySliceMs),
    );
    const router = new WakeRouter({
      ...init,
      store,
      zero: this.zero,
      counters: control.counters,
      filtering: () => config.visibility !== undefined && control.knobs.visibilityEnabled,
      pristine: this.deferred !== null,
    });
    this.coalescer = new WakeCoalescer(init.namespace, config.wakeWindowMs, init.scheduler, (round) =>
      router.route(round),
    );
  }

  /** Whether nothing was written to the namespace yet: its database holds nothing of weir's. */
  get pristine(): boolean {
    return this.deferred?.pending === true;
  }

  pull(...[dialect, body, claims, followers, pages]: Parameters<ZeroNamespace["pull"]>): PullFlowResult {
    const ctx = this.contexts.pull;
    return this.guard(false, () => runPull(ctx, dialect, body, claims, followers, undefined, pages));
  }

  /**
   * A native pull over HTTP: a query patch that puts more queries than one step evaluates is
   * applied in steps, other requests served between them (see runSlicedPull).
   */
  async pullNative(body: unknown, claims: Claims): Promise<PullFlowResult> {
    return this.inTurns(false, () => runSlicedPull(this.contexts.pull, body, claims, this.pullSteps));
  }

  /** A Replicache pull over HTTP: a reset is read in pages, other requests served between them. */
  async pullReplicache(body: unknown, claims: Claims): Promise<PullFlowResult> {
    const ctx = this.contexts.pull;
    return this.inTurns(false, () =>
      runPagedPull(ctx, (pages) => runPull(ctx, "replicache", body, claims, undefined, undefined, pages)),
    );
  }

  /** `guard` for a flow that gives other requests turns while it runs. */
  private async inTurns<T extends FlowResult>(writes: boolean, flow: () => Promise<T>): Promise<T> {
    try {
      return await flow();
    } catch (error) {
      if (error instanceof FaultError) this.control.disarm(error.point);
      throw error;
    } finally {
      this.counterFlush.changed(writes, this.clock.monotonic());
    }
  }

  /** A push, committed in slices of `pushSliceMs`, other requests served between them (see runPush). */
  push(dialect: Dialect, body: unknown, claims: Claims, recordWith?: RecordWith): Promise<FlowResult> {
    return this.inTurns(true, () =>
      runPush(this.contexts.push, dialect, body, claims, this.pushSliceMs, recordWith),
    );
  }

  admin(action: Exclude<AdminAction, IngestAction>, method: string, body: unknown): FlowResult {
    return this.guard(method !== "GET", () => runAdmin(this.contexts.admin, action, method, body));
  }

  /** Whether pushes go to the app's own server (delegated push). */
  get delegates(): boolean {
    return this.contexts.delegatedPush !== null;
  }

  /** A push, delegated to the app's mutate endpoint (see runDelegatedPush). */
  async pushDelegated(
    dialect: Dialect,
    body: unknown,
    claims: Claims,
    authorization: string | null,
    recordWith?: RecordWith,
  ): Promise<FlowResult> {
    try {
      const ctx = this.contexts.delegatedPush!;
      return await runDelegatedPush(ctx, dialect, body, claims, authorization, recordWith);
    } finally {
      this.counterFlush.changed(true, this.clock.monotonic());
    }
  }

  /** `POST /<ns>/notify`: ingest what the upstream committed, then answer. */
  notify(body: unknown): Promise<FlowResult> {
    this.ingester?.upstreamMoved();
    return runNotify(this.contexts.ingest, body, this.clock.now());
  }

  /** The admin routes of ingest (a pass now, a new snapshot, reopening the breaker). */
  ingestAdmin(action: IngestAction, body: unknown): Promise<FlowResult> {
    return runIngestAdmin(this.contexts.ingest, action, body, this.clock.now());
  }

  /** Whether the namespace replicates an upstream. */
  get hasUpstream(): boolean {
    return this.ingester !== null;
  }

  /**
   * Runs `fn` in one transaction, the flows it runs nested inside. Should the commit itself fail
   * after they ran, what they taught the caught-up answers is not trusted.
   */
  transaction<T>(fn: () => T): T {
    let ran = false;
    try {
      return this.store.transaction(() => {
        const result = fn();
        ran = true;
        return result;
      });
    } catch (error) {
      if (ran) this.caughtUp.distrust();
      throw error;
    }
  }

  /** The upstream committed changes for this namespace while it was not open. */
  upstreamCommittedWhileClosed(): void {
    this.ingester?.committedWhileClosed();
  }

  /** The upstream committed rows for this namespace (an in-process notify): ingest them now. */
  upstreamCommitted(): Promise<IngestPassResult> {
    if (!this.ingester) return Promise.reject(new HttpError("not_found", "this namespace has no upstream"));
    this.ingester.upstreamMoved();
    return this.ingester.run({});
  }

  /** Why this namespace's ingest stopped (`schema_drift`), or null: pulls carry it in a header. */
  ingestStopped(): string | null {
    return this.ingester?.stoppedCode ?? null;
  }

  /**
   * Before a pull or push: null when the replica is fresh enough (or has no upstream), else a
   * promise that settles once a pass did or `freshnessWaitMs` passed. Never rejects.
   */
  freshen(): Promise<void> | null {
    return this.ingester?.freshen() ?? null;
  }

  /** A wake socket is opening: while any is open, the namespace polls its upstream. */
  watching(): void {
    this.ingester?.watch();
  }

  /** One upstream poll (for hosts whose timer outlives the process: a Durable Object's alarm). */
  poll(): Promise<void> {
    return this.ingester?.poll() ?? Promise.resolve();
  }

  /** Stops polling, and a pass in progress at its next step (the host is closing). */
  stopIngest(): void {
    this.ingester?.close();
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

  /**
   * Wakes the clients a commit by these writers concerns (see `route`): the writing user's, and
   * those whose visibility admits a changed row; `scope.everyone` (an operator's change) wakes all.
   */
  committed(writers: Iterable<string>, scope: CommitScope = {}): void {
    this.coalescer.notify(writers, scope);
  }

  /** Runs effects queued with `tx.defer`, after their commit; a failing one is logged, not thrown. */
  runDeferred(effects: Array<() => void | Promise<void>>): void {
    runDeferredEffects(effects, this.waitUntil, this.logger, this.hash);
  }

  /** Stores the counters now (they are also stored as the host's CounterFlushPolicy says). */
  saveCounters(): void {
    // A namespace only pulled from keeps its counters in memory: storing them would install it.
    if (this.pristine) return;
    try {
      this.control.saveCounters();
    } catch (error) {
      this.logger.log("error", { msg: "saving counters failed", ns: this.hash, error: String(error) });
    }
  }

  /** A request (or a socket) starts using the namespace. */
  enter(): void {
    this.usage.enter();
  }

  /** A request (or a socket) is done with the namespace. */
  leave(): void {
    this.usage.leave();
  }

  /**
   * Stores the counters and closes the database, telling the store the watermark it closed at.
   * A `damaged` database (it failed as corrupt) is closed untouched. An `evicted` namespace (idle,
   * or making room) lets go of its Zero connections without closing their sockets.
   */
  close(damaged = false, evicted = false): void {
    if (this.closed) return;
    this.closed = true;
    this.ingester?.close();
    this.zero.close(evicted && !damaged ? "detach" : "fail");
    if (damaged) this.coalescer.cancel();
    else this.coalescer.close();
    this.counterFlush.cancel();
    // A namespace only pulled from has nothing to store, nor a watermark to tell.
    if (damaged || this.pristine) {
      this.store.close(damaged ? { damaged: true } : {});
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

  /**
   * Runs a flow. A fired fault is one-shot: it is disarmed (in its own transaction, as the flow's
   * rolled back). Counters are stored as the flush policy says.
   */
  private guard<T extends FlowResult>(writes: boolean, flow: () => T): T {
    try {
      return flow();
    } catch (error) {
      if (error instanceof FaultError) this.control.disarm(error.point);
      throw error;
    } finally {
      this.counterFlush.changed(writes, this.clock.monotonic());
    }
  }
}
