import {
  type ChangeAudience,
  type Engine,
  EngineError,
  type SqlAdapter,
  type Visibility,
} from "@weir/engine-wasm";
import type { AdminAction, Dialect, MutateRequest } from "@weir/protocol";
import { type Subscription, subscriptionFor } from "../audience/subscription.js";
import { EVERYONE, type WakeAudience } from "../audience/wake-audience.js";
import { authenticateRequest } from "../auth/authenticate-request.js";
import type { Claims } from "../auth/claims.js";
import type { QueryDefinition, ResolvedConfig } from "../config/weir-config.js";
import { runDelegatedPush } from "../delegate/delegated-push-flow.js";
import type { MutateOutcome } from "../delegate/mutate-call.js";
import { MutateDelegate } from "../delegate/mutate-delegate.js";
import { runAdmin } from "../flows/admin-flow.js";
import { CaughtUpPulls } from "../flows/caught-up-pulls.js";
import type { Counters } from "../flows/counters.js";
import { FaultError } from "../flows/fault.js";
import type {
  AdminContext,
  DelegatedPushContext,
  FlowResult,
  IngestContext,
  PullContext,
  PushContext,
  QueryLimits,
} from "../flows/flow-context.js";
import type { Knobs } from "../flows/knobs.js";
import { type PullFlowResult, runPull } from "../flows/pull-flow.js";
import type { RecordWith } from "../flows/push-answers.js";
import { runPush } from "../flows/push-flow.js";
import { HttpError } from "../http/http-error.js";
import { type IngestAction, runIngestAdmin, runNotify } from "../ingest/ingest-flow.js";
import type { IngestPassResult } from "../ingest/ingest-pass.js";
import { type IngestEvent, NamespaceIngest } from "../ingest/namespace-ingest.js";
import type { TableInfo } from "../mutators/column-codec.js";
import type { Mutator } from "../mutators/mutator.js";
import type { Clock } from "../ports/clock.js";
import type { Logger } from "../ports/logger.js";
import type { Scheduler } from "../ports/scheduler.js";
import type { NamespaceStore } from "../ports/storage.js";
import type { UpstreamSource } from "../ports/upstream-source.js";
import type { Wake } from "../ports/wake.js";
import { ZeroGroupStore } from "../zero/zero-group-store.js";
import { ZeroHub } from "../zero/zero-hub.js";
import type { ZeroMeter } from "../zero/zero-meter.js";
import type { ZeroNamespace } from "../zero/zero-namespace.js";
import { ControlStore } from "./control-store.js";
import { CounterFlush, type CounterFlushPolicy } from "./counter-flush.js";
import { NamespaceUsage } from "./namespace-usage.js";
import { RetentionPacer } from "./retention-pacer.js";
import { type CommitScope, WakeCoalescer, type WakeRound } from "./wake-coalescer.js";

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

/**
 * One namespace: its database, knobs, counters and wake window, and the flows that run on them
 * (each takes the narrow context it needs, which this class implements). Flows are synchronous
 * between reading the body and answering, so one namespace's transactions never interleave.
 */
export class NamespaceService
  implements PullContext, PushContext, AdminContext, IngestContext, DelegatedPushContext, ZeroNamespace
{
  readonly namespace: string;
  /** The namespace as it appears in logs. */
  readonly hash: string;
  readonly store: NamespaceStore;
  readonly engine: Engine;
  readonly clock: Clock;
  /** Caught-up pulls answered from memory; forgotten by every transaction of `store`. */
  readonly caughtUp = new CaughtUpPulls();
  readonly caps: { readonly maxChangeRows: number; readonly maxChangeBytes: number };
  readonly mutators: Readonly<Record<string, Mutator>>;
  readonly tables: ReadonlyMap<string, TableInfo>;
  readonly queries: Readonly<Record<string, QueryDefinition>> | undefined;
  readonly tolerateUnknownQueries: boolean;
  readonly maxQueryRows: number;
  readonly queryLimits: QueryLimits;
  readonly queryTransformVersion: number | ((claims: Claims) => number) | undefined;
  private readonly config: ResolvedConfig;
  private readonly control: ControlStore;
  private readonly wake: Wake;
  private readonly logger: Logger;
  private readonly waitUntil: (promise: Promise<unknown>) => void;
  private readonly processMemory: () => Record<string, number>;
  private readonly coalescer: WakeCoalescer;
  /** The version up to which commits were routed to the sockets they concern. */
  private routed: number;
  /** The namespace's Zero connections (Zero's sync protocol over WebSocket). */
  readonly zero: ZeroHub;
  /** What the Zero dialect keeps of each client group with the data (ZeroNamespace). */
  readonly zeroStore: ZeroGroupStore;
  private readonly counterFlush: CounterFlush;
  /** Ingest from the upstream, when the namespace has one. */
  private readonly ingester: NamespaceIngest | null;
  /** The app's mutate endpoint, when pushes are delegated to it. */
  private readonly delegate: MutateDelegate | null;
  /** Requests being served, so an idle close never pulls the database from under one. */
  readonly usage: NamespaceUsage;
  private readonly retentionPacer: RetentionPacer;
  private closed = false;

  constructor(init: NamespaceServiceInit) {
    this.namespace = init.namespace;
    this.hash = init.hash;
    this.store = this.caughtUp.forgettingStore(init.store);
    this.engine = init.engine;
    this.config = init.config;
    this.caps = { maxChangeRows: init.config.maxChangeRows, maxChangeBytes: init.config.maxChangeBytes };
    this.mutators = init.config.mutators;
    this.queries = init.config.queries;
    this.tolerateUnknownQueries = init.config.tolerateUnknownQueries ?? false;
    this.maxQueryRows = init.config.maxQueryRows;
    this.queryLimits = {
      queryBudgetMs: init.config.queryBudgetMs,
      maxGroupQueries: init.config.maxGroupQueries,
      maxGroupQueryBytes: init.config.maxGroupQueryBytes,
    };
    this.queryTransformVersion = init.config.queryTransformVersion;
    this.tables = init.tables;
    this.wake = init.wake;
    this.clock = init.clock;
    this.logger = init.logger;
    this.waitUntil = init.waitUntil;
    this.processMemory = init.memory ?? (() => ({}));
    this.usage = new NamespaceUsage(init.clock);
    this.store.transaction(() => this.engine.install(this.store.db, this.config.schema));
    this.control = ControlStore.open(this.store);
    this.routed = this.engine.state(this.store.db).watermark;
    this.coalescer = new WakeCoalescer(init.namespace, init.config.wakeWindowMs, init.scheduler, (round) =>
      this.route(round),
    );
    this.zeroStore = new ZeroGroupStore(this.store);
    this.zero = new ZeroHub(
      this,
      this.logger,
      (token) =>
        Promise.resolve(
          authenticateRequest(this.config, this.logger, {
            method: "GET",
            url: "http://zero/",
            headers: new Headers({ authorization: `Bearer ${token}` }),
          }),
        ),
      init.zeroMeter,
    );
    this.counterFlush = new CounterFlush(init.counterFlush, () => this.saveCounters(), this.usage.lastUsed);
    this.retentionPacer = new RetentionPacer({
      engine: this.engine,
      store: this.store,
      retainChanges: () => this.retainChanges,
      logger: this.logger,
      hash: this.hash,
    });
    const upstream = init.config.upstream;
    this.ingester =
      upstream && init.upstream
        ? new NamespaceIngest({
            namespace: init.namespace,
            hash: init.hash,
            engine: this.engine,
            store: this.store,
            schema: init.config.schema,
            source: init.upstream,
            upstream,
            control: this.control,
            clock: this.clock,
            logger: this.logger,
            scheduler: init.pollScheduler,
            wakeSockets: () => this.wakeSockets(),
            committed: () => this.committed([]),
            enter: () => this.enter(),
            leave: () => this.leave(),
            waitUntil: this.waitUntil,
            ...(init.observeIngest ? { observe: init.observeIngest } : {}),
          })
        : null;
    const ingester = this.ingester;
    const url = ingester ? (init.config.mutate?.url(init.namespace) ?? null) : null;
    this.delegate =
      ingester && url !== null
        ? new MutateDelegate({
            namespace: init.namespace,
            url,
            mutate: init.config.mutate!,
            clock: this.clock,
            catchUp: (watermark, waitMs) => ingester.catchUp(watermark, waitMs),
            building: () => this.upstreamCursor() === null,
          })
        : null;
  }

  get knobs(): Readonly<Knobs> {
    return this.control.knobs;
  }

  get counters(): Counters {
    return this.control.counters;
  }

  setKnob<K extends keyof Knobs>(key: K, value: Knobs[K]): void {
    this.control.set(key, value);
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

  subscriptionFor(claims: Claims): Subscription {
    return subscriptionFor(this.config.schema, this.config.visibility, claims);
  }

  wakeSockets(): number {
    return this.wake.count(this.namespace);
  }

  sizeBytes(): number | null {
    return this.store.sizeBytes?.() ?? null;
  }

  memory(): Record<string, number> {
    return this.processMemory();
  }

  pull(dialect: Dialect, body: unknown, claims: Claims, followers?: readonly string[]): PullFlowResult {
    return this.guard(false, () => runPull(this, dialect, body, claims, followers));
  }

  push(dialect: Dialect, body: unknown, claims: Claims, recordWith?: RecordWith): FlowResult {
    return this.guard(true, () => runPush(this, dialect, body, claims, recordWith));
  }

  admin(action: Exclude<AdminAction, IngestAction>, method: string, body: unknown): FlowResult {
    return this.guard(method !== "GET", () => runAdmin(this, action, method, body));
  }

  /** Whether pushes go to the app's own server (delegated push). */
  get delegates(): boolean {
    return this.delegate !== null;
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
      return await runDelegatedPush(this, dialect, body, claims, authorization, recordWith);
    } finally {
      this.counterFlush.changed(true, this.clock.monotonic());
    }
  }

  forward(body: MutateRequest, authorization: string | null): Promise<MutateOutcome> {
    return this.delegate!.forward(body, authorization);
  }

  ingestEffects(watermark: bigint | undefined): Promise<void> {
    return this.delegate!.ingestEffects(watermark);
  }

  /** `POST /<ns>/notify`: ingest what the upstream committed, then answer. */
  notify(body: unknown): Promise<FlowResult> {
    this.ingester?.upstreamMoved();
    return runNotify(this, body, this.clock.now());
  }

  /** The admin routes of ingest (a pass now, a new snapshot, reopening the breaker). */
  ingestAdmin(action: IngestAction, body: unknown): Promise<FlowResult> {
    return runIngestAdmin(this, action, body, this.clock.now());
  }

  /** Whether the namespace replicates an upstream. */
  get hasUpstream(): boolean {
    return this.ingester !== null;
  }

  watermark(): number {
    return this.engine.state(this.store.db).watermark;
  }

  lastMutationID(clientGroupID: string, clientID: string): number {
    return this.engine.preflight(this.store.db, { clientGroupID, clientID, mutationID: 1 }).lastMutationID;
  }

  claimGroup(clientGroupID: string, userID: string): boolean {
    try {
      this.store.transaction(() => this.engine.claimGroup(this.store.db, clientGroupID, userID));
      return true;
    } catch (error) {
      if (error instanceof EngineError && error.code === "forbidden") return false;
      throw error;
    }
  }

  groupMutationIDs(clientGroupID: string, userID: string): Record<string, number> {
    return this.engine.groupMutationIDs(this.store.db, clientGroupID, userID);
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

  storedQueries(clientGroupID: string): readonly { hash: string; name: string; args: unknown }[] {
    return this.engine.groupQueries(this.store.db, clientGroupID).queries;
  }

  upstreamCursor(): string | null {
    return this.store.transaction(() => this.engine.upstreamState(this.store.db)).cursor;
  }

  /** A pass for notify or the admin routes, answered within `upstream.answerWithinMs`. */
  ingest(options: { resnapshot?: boolean }): Promise<IngestPassResult> {
    if (!this.ingester) return Promise.reject(new HttpError("not_found", "this namespace has no upstream"));
    return this.ingester.answer(options);
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

  reopenBreaker(options: { resnapshot?: boolean }): {
    wasOpen: boolean;
    pass: Promise<IngestPassResult> | null;
  } {
    if (!this.ingester) throw new HttpError("not_found", "this namespace has no upstream");
    return this.ingester.reopen(options);
  }

  /** Why this namespace's ingest stopped (`schema_drift`), or null: pulls carry it in a header. */
  ingestStopped(): string | null {
    return this.ingester?.stoppedCode ?? null;
  }

  upstreamStatus(): Record<string, unknown> | null {
    return this.ingester?.status() ?? null;
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

  /** Retention after pushes: a pass once the log has grown enough (see RetentionPacer). */
  retention(newVersions: number): void {
    this.retentionPacer.committed(newVersions);
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

  /**
   * Sends one wake round: to the wake sockets and Zero groups the commits since the last round
   * concern. The engine reads the span's changes once and answers the probes of every listener's
   * filters (`changeAudience`); the indexes then pick the listeners out by what it found, so a
   * round costs what the commits changed and whom they concern, not how many listen.
   */
  private route(round: WakeRound): void {
    let audience: WakeAudience;
    const visibilityOff = !this.config.visibility || !this.control.knobs.visibilityEnabled;
    const probes =
      round.everyone || visibilityOff
        ? new Map()
        : this.zero.probes(new Map(this.wake.probes(this.namespace)));
    let found: ChangeAudience;
    try {
      found = this.engine.changeAudience(this.store.db, this.routed, [...probes.values()]);
    } catch (error) {
      // A filter the probes could not evaluate on their own (it names what only its table
      // has): this round wakes everyone, and the next starts from the watermark.
      this.logger.log("error", { msg: "wake routing failed", ns: this.hash, error: String(error) });
      this.routed = this.watermark();
      found = { everyone: true, tables: new Set(), answers: [], through: this.routed };
    }
    this.routed = found.through;
    if (round.everyone || visibilityOff) {
      audience = EVERYONE;
    } else {
      const ids = [...probes.keys()];
      const keys = new Map<string, ReadonlySet<string>>();
      const passed = new Set<string>();
      found.answers.forEach((answer, index) => {
        if (answer === true) passed.add(ids[index]!);
        else if (answer !== false && answer.size > 0) keys.set(ids[index]!, answer);
      });
      audience = found.everyone
        ? EVERYONE
        : { everyone: false, tables: found.tables, keys, passed, users: round.users };
    }
    this.control.counters.wakeFrames += this.wake.send(this.namespace, audience, round.except);
    this.zero.changed(audience);
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

  /** Stores the counters now (they are also stored as the host's CounterFlushPolicy says). */
  saveCounters(): void {
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
    this.coalescer.cancel();
    this.counterFlush.cancel();
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
