import type { Engine } from "@weir/engine-wasm";
import { resolveConfig } from "../config/resolve-config.js";
import type { ResolvedConfig, WeirConfig } from "../config/weir-config.js";
import { errorAnswer } from "../http/error-answer.js";
import { ShuttingDownError } from "../http/http-error.js";
import { partsFromRequest, type RequestParts, type ResponseParts, toResponse } from "../http/http-parts.js";
import { requestPath } from "../http/request-path.js";
import {
  knownNamespaceHash,
  namespaceHash,
  type RequestRecord,
  resultClass,
} from "../http/request-record.js";
import { matchRoute } from "../http/route.js";
import { type TableInfo, tableInfos } from "../mutators/column-codec.js";
import { DEFAULT_COUNTER_FLUSH } from "../namespace/counter-flush.js";
import { type AcquireContext, NamespaceRegistry, type Unavailable } from "../namespace/namespace-registry.js";
import { NamespaceService } from "../namespace/namespace-service.js";
import { type Clock, elapsedMs, systemClock } from "../ports/clock.js";
import { consoleJsonLogger, type Logger } from "../ports/logger.js";
import { memoryQuotaStore } from "../ports/quota-store.js";
import type { Scheduler } from "../ports/scheduler.js";
import type { NamespaceStore } from "../ports/storage.js";
import { TimerScheduler } from "../ports/timer-scheduler.js";
import { type Admitted, UserBudgets } from "../quotas/user-budgets.js";
import { ZeroSessions } from "../zero/zero-sessions.js";
import type { HostPorts } from "./host-ports.js";
import { InFlight } from "./in-flight.js";
import { namespaceFailure } from "./namespace-failure.js";
import { RequestRouter, touchService } from "./request-router.js";

/** Validates the config (throwing a ConfigError) and builds a host of the engine over these ports. */
export function createWeirHost(config: WeirConfig, engine: Engine, ports: HostPorts): WeirHost {
  return new WeirHost(resolveConfig(config), engine, ports);
}

/**
 * Answers weir's routes over standard Request/Response, opening each namespace's service on its
 * first request. A failure of one namespace (a damaged database, an engine failure) is kept to
 * that namespace.
 */
export class WeirHost {
  readonly config: ResolvedConfig;
  private readonly tables: Map<string, TableInfo>;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly registry: NamespaceRegistry;
  private readonly budgets: UserBudgets;
  private readonly router: RequestRouter;
  private readonly pollScheduler: Scheduler;
  /** Requests being answered, and what `close` waits on until there are none. */
  private readonly inflight = new InFlight();
  private readonly background = new Set<Promise<unknown>>();
  /** Zero sockets, kept across their namespace's evictions. */
  private readonly zeroSessions = new ZeroSessions({
    reopen: async (namespace, userID) => {
      const service =
        this.registry.get(namespace) ?? (await this.registry.acquire(namespace, { creator: userID }));
      return { hub: service.zero, touch: () => touchService(service) };
    },
  });
  private closing = false;

  constructor(
    config: ResolvedConfig,
    private readonly engine: Engine,
    private readonly ports: HostPorts,
  ) {
    this.config = config;
    this.tables = tableInfos(config.schema);
    this.clock = ports.clock ?? systemClock;
    this.logger = ports.logger ?? consoleJsonLogger;
    this.pollScheduler = ports.pollScheduler ?? new TimerScheduler();
    this.registry = new NamespaceRegistry({
      storage: ports.storage,
      clock: this.clock,
      logger: this.logger,
      maxOpen: config.maxOpenNamespaces,
      serve: (name, store) => this.serveNamespace(name, store),
    });
    this.budgets = new UserBudgets(
      config.quotas,
      ports.quotaStore ?? memoryQuotaStore(),
      this.clock,
      (error) => this.logger.log("error", { msg: "storing quota spends failed", error: String(error) }),
    );
    this.router = new RequestRouter({
      config,
      logger: this.logger,
      registry: this.registry,
      budgets: this.budgets,
      zeroSessions: this.zeroSessions,
    });
  }

  /** Answers one request; never throws. */
  async handle(request: Request): Promise<Response> {
    return toResponse(await this.handleParts(partsFromRequest(request)));
  }

  /**
   * Answers a request given as parts, for hosts that parse HTTP themselves and would rather not
   * build a Request and a Response per call; never throws.
   */
  handleParts(parts: RequestParts): Promise<ResponseParts> {
    return this.serve(parts);
  }

  /** The namespace's service, opening (and installing) its database on first use. */
  namespace(name: string, context?: AcquireContext): Promise<NamespaceService> {
    return this.registry.acquire(name, context);
  }

  /**
   * An upstream in this process committed changes for these namespaces (the in-process form of
   * `POST /<ns>/notify`): each one open ingests now, and wakes its clients. A namespace that is
   * not open has no client to wake; its next pull or push, once it opens, ingests first.
   */
  upstreamCommitted(namespaces: Iterable<string>): void {
    for (const name of namespaces) {
      const service = this.registry.get(name);
      // A failed pass is logged by the namespace; the next notify or poll tries again.
      if (service?.hasUpstream) service.upstreamCommitted().catch(() => {});
      else if (!service) this.registry.upstreamCommittedWhileClosed(name);
    }
  }

  /** How many namespaces have their database open. */
  get openNamespaces(): number {
    return this.registry.size;
  }

  /** Namespaces refused because their database is damaged or lost, with why and since when. */
  get unavailableNamespaces(): ReadonlyMap<string, Unavailable> {
    return this.registry.unavailable;
  }

  /**
   * Wake sockets of the namespace are open here without the request that opened them (they came
   * with the namespace from another host of its files): with an upstream, it opens and polls
   * while they are open, as after a wake request.
   */
  async watchUpstream(name: string): Promise<void> {
    if (!this.config.upstream || this.closing) return;
    const service = this.registry.get(name) ?? (await this.registry.acquire(name));
    touchService(service);
    service.watching();
  }

  /**
   * Closes the namespace once no request uses it, for another host of the same files to open it
   * next; the caller sends it no request meanwhile and has closed its sockets.
   */
  release(name: string): Promise<void> {
    return this.registry.release(name);
  }

  /** Closes namespaces unused for `idleMs` that no request is using; answers how many. */
  closeIdle(idleMs: number): number {
    return this.registry.closeIdle(idleMs);
  }

  /** Refuses new requests (503), waits for the ones in flight and deferred effects, closes every database. */
  async close(): Promise<void> {
    this.closing = true;
    await this.inflight.drained();
    // Ingest passes stop at their next step; what they applied is committed.
    for (const service of this.registry.services()) service.stopIngest();
    await Promise.allSettled([...this.background]);
    await this.registry.closeAll();
    this.zeroSessions.closeAll();
    try {
      this.budgets.flush();
    } catch (error) {
      this.logger.log("error", { msg: "storing quota spends failed", error: String(error) });
    }
  }

  private async serve(request: RequestParts): Promise<ResponseParts> {
    this.inflight.enter();
    try {
      return await this.answer(request);
    } finally {
      this.inflight.leave();
    }
  }

  private async answer(request: RequestParts): Promise<ResponseParts> {
    const started = this.clock.monotonic();
    const record: RequestRecord = { msg: "request", kind: "unknown", status: 0, result: "ok", totalMs: 0 };
    let service: NamespaceService | undefined;
    let namespace: string | undefined;
    let admitted: Admitted | null = null;
    let response: ResponseParts;
    try {
      const route = matchRoute(request.method, requestPath(request.url));
      record.kind = route.kind;
      namespace = route.namespace;
      if (this.closing) throw new ShuttingDownError();
      // Each await costs a turn of the microtask queue: only what is not at hand is awaited.
      record.ns = knownNamespaceHash(route.namespace) ?? (await namespaceHash(route.namespace));
      response = await this.router.route(
        request,
        route,
        record,
        (user) => {
          admitted = user;
        },
        (opened) => {
          service = opened;
          opened.enter();
        },
      );
    } catch (error) {
      response = errorAnswer(
        namespaceFailure(this.registry, error, namespace, record, service),
        record,
        this.logger,
      );
    } finally {
      if (service) {
        service.leave();
        this.registry.released(service);
      }
    }
    record.status = response.status;
    record.result = resultClass(response.status);
    record.totalMs = elapsedMs(this.clock, started);
    if (admitted) this.charge(admitted, record);
    this.logger.log(
      record.result === "server_error" ? "error" : "info",
      record as unknown as Record<string, unknown>,
    );
    this.ports.observe?.(record);
    return response;
  }

  private charge(admitted: Admitted, record: RequestRecord): void {
    try {
      this.budgets.chargeRequest(admitted, record);
    } catch (error) {
      // The answer stands; the spend is counted with the next one.
      this.logger.log("error", { msg: "storing quota spends failed", error: String(error) });
    }
  }

  private async serveNamespace(name: string, store: NamespaceStore): Promise<NamespaceService> {
    const service = new NamespaceService({
      namespace: name,
      hash: await namespaceHash(name),
      store,
      engine: this.engine,
      config: this.config,
      tables: this.tables,
      scheduler: this.ports.scheduler,
      wake: this.ports.wake,
      clock: this.clock,
      logger: this.logger,
      ...(this.ports.memory ? { memory: this.ports.memory } : {}),
      waitUntil: (promise) => this.keepAlive(promise),
      counterFlush: this.ports.counterFlush ?? DEFAULT_COUNTER_FLUSH,
      upstream: this.config.upstream?.source(name) ?? null,
      pollScheduler: this.pollScheduler,
      ...(this.ports.observeIngest ? { observeIngest: this.ports.observeIngest } : {}),
      zeroMeter: (userID, cost) => this.budgets.chargeZeroMessage(userID, cost),
    });
    // Zero sockets parked when the namespace was last evicted get their connections back.
    this.zeroSessions.restore(name, service.zero, () => touchService(service));
    return service;
  }

  private keepAlive(promise: Promise<unknown>): void {
    if (this.ports.waitUntil) {
      this.ports.waitUntil(promise);
      return;
    }
    this.background.add(promise);
    promise.finally(() => this.background.delete(promise));
  }
}
