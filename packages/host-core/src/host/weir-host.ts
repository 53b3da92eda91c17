import { type Engine, EngineFailure } from "@weir/engine-wasm";
import { IdString, INGEST_STOPPED_HEADER, parse } from "@weir/protocol";
import { subscriptionFor } from "../audience/subscription.js";
import { authenticateRequest, authorizeNamespace } from "../auth/authenticate-request.js";
import { checkAdmin } from "../auth/check-admin.js";
import { checkNotify } from "../auth/check-notify.js";
import type { Claims } from "../auth/claims.js";
import { resolveConfig } from "../config/resolve-config.js";
import type { ResolvedConfig, WeirConfig } from "../config/weir-config.js";
import { errorAnswer } from "../http/error-answer.js";
import { HttpError, ShuttingDownError } from "../http/http-error.js";
import { partsFromRequest, type RequestParts, type ResponseParts, toResponse } from "../http/http-parts.js";
import { readJsonBody } from "../http/read-json-body.js";
import { requestPath } from "../http/request-path.js";
import {
  knownNamespaceHash,
  namespaceHash,
  type RequestRecord,
  resultClass,
} from "../http/request-record.js";
import { matchRoute, type Route } from "../http/route.js";
import { isIngestAction } from "../ingest/ingest-flow.js";
import type { IngestEvent } from "../ingest/namespace-ingest.js";
import { type TableInfo, tableInfos } from "../mutators/column-codec.js";
import { type CounterFlushPolicy, DEFAULT_COUNTER_FLUSH } from "../namespace/counter-flush.js";
import { type AcquireContext, NamespaceRegistry, type Unavailable } from "../namespace/namespace-registry.js";
import { NamespaceService } from "../namespace/namespace-service.js";
import { NamespaceUnavailableError } from "../namespace/namespace-unavailable-error.js";
import { storageFailure } from "../namespace/storage-failure.js";
import { type Clock, elapsedMs, systemClock } from "../ports/clock.js";
import { consoleJsonLogger, type Logger } from "../ports/logger.js";
import { memoryQuotaStore, type QuotaStore } from "../ports/quota-store.js";
import type { Scheduler } from "../ports/scheduler.js";
import type { NamespaceStore, Storage } from "../ports/storage.js";
import { TimerScheduler } from "../ports/timer-scheduler.js";
import type { Wake } from "../ports/wake.js";
import { type Admitted, UserBudgets } from "../quotas/user-budgets.js";
import { acceptZero } from "../zero/zero-accept.js";
import { ZeroSessions } from "../zero/zero-sessions.js";
import { InFlight } from "./in-flight.js";

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

/** Validates the config (throwing a ConfigError) and builds a host of the engine over these ports. */
export function createWeirHost(config: WeirConfig, engine: Engine, ports: HostPorts): WeirHost {
  return new WeirHost(resolveConfig(config), engine, ports);
}

/** A Zero frame marks the namespace used (its idle time starts again) without holding it. */
function touchService(service: NamespaceService): void {
  service.enter();
  service.leave();
}

const STORAGE_FULL =
  "the namespace's storage is full: nothing of this request was stored; retry once there is room";

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
      response = await this.route(
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
      response = errorAnswer(this.failure(error, namespace, record, service), record, this.logger);
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

  private async route(
    request: RequestParts,
    route: Route,
    record: RequestRecord,
    admitted: (user: Admitted | null) => void,
    using: (service: NamespaceService) => void,
  ): Promise<ResponseParts> {
    if (route.type === "admin") {
      await checkAdmin(this.config, request);
      const body =
        request.method === "POST" ? await readJsonBody(request, this.config.maxBodyBytes, true) : undefined;
      const service = this.registry.get(route.namespace) ?? (await this.registry.acquire(route.namespace));
      using(service);
      const result = isIngestAction(route.action)
        ? await service.ingestAdmin(route.action, body)
        : service.admin(route.action, request.method, body);
      Object.assign(record, result.log);
      return result.response;
    }
    if (route.type === "notify") {
      await checkNotify(this.config, request, route.namespace);
      const body = await readJsonBody(request, this.config.maxBodyBytes, true);
      // Refused before the namespace is opened: a refusal creates no namespace.
      const open = this.registry.get(route.namespace);
      if (open ? !open.hasUpstream : !this.config.upstream?.source(route.namespace)) {
        throw new HttpError("not_found", "this namespace has no upstream");
      }
      const service = open ?? (await this.registry.acquire(route.namespace));
      using(service);
      if (!service.hasUpstream) throw new HttpError("not_found", "this namespace has no upstream");
      const result = await service.notify(body);
      Object.assign(record, result.log);
      return result.response;
    }
    if (route.type === "zero") {
      if (request.headers.get("upgrade")?.toLowerCase() !== "websocket") {
        throw new HttpError("bad_request", "this route is a WebSocket: send `Upgrade: websocket`");
      }
      let opened: NamespaceService | undefined;
      const zero = await acceptZero(route.version, request, {
        authenticate: async (auth) => {
          const claims = await authenticateRequest(this.config, this.logger, auth);
          await authorizeNamespace(this.config, claims, route.namespace);
          admitted(this.budgets.admitRequest(claims.userID));
          return claims;
        },
        hub: async (claims) => {
          opened = this.registry.get(route.namespace) ?? (await this.acquireFor(route.namespace, claims));
          return opened.zero;
        },
      });
      const touch = () => {
        if (opened) touchService(opened);
      };
      return {
        status: 101,
        headers: {},
        body: null,
        zero: this.zeroSessions.wrap(route.namespace, zero, touch),
      };
    }
    const authenticated = authenticateRequest(this.config, this.logger, request);
    const claims = authenticated instanceof Promise ? await authenticated : authenticated;
    const authorized = authorizeNamespace(this.config, claims, route.namespace);
    if (authorized) await authorized;
    admitted(this.budgets.admitRequest(claims.userID));
    if (route.type === "wake") {
      const clientID = parse(IdString, new URL(request.url).searchParams.get("clientID") ?? "");
      if (!clientID.ok) throw new HttpError("bad_request", `clientID: ${clientID.message}`);
      if (request.headers.get("upgrade")?.toLowerCase() !== "websocket") {
        throw new HttpError("bad_request", "this route is a WebSocket: send `Upgrade: websocket`");
      }
      if (this.config.upstream) {
        // While wake sockets are open, the namespace polls its upstream.
        const service =
          this.registry.get(route.namespace) ?? (await this.acquireFor(route.namespace, claims));
        using(service);
        service.watching();
      }
      return {
        status: 101,
        headers: {},
        body: null,
        upgrade: {
          namespace: route.namespace,
          clientID: clientID.value,
          claims,
          subscription: subscriptionFor(this.config.schema, this.config.visibility, claims),
        },
      };
    }
    const read = readJsonBody(request, this.config.maxBodyBytes);
    const body = read instanceof Promise ? await read : read;
    const service = this.registry.get(route.namespace) ?? (await this.acquireFor(route.namespace, claims));
    using(service);
    const fresh = service.freshen();
    if (fresh) await fresh;
    const dialect = route.kind.startsWith("replicache") ? "replicache" : "native";
    const pull = route.kind === "pull" || route.kind === "replicache_pull";
    const result = pull
      ? service.pull(dialect, body, claims)
      : service.delegates
        ? await service.pushDelegated(dialect, body, claims, request.headers.get("authorization"))
        : service.push(dialect, body, claims);
    Object.assign(record, result.log);
    // A replica whose ingest stopped goes stale while pulls go on: say so where clients and
    // operators look, until an operator reopens it.
    const stopped = pull ? service.ingestStopped() : null;
    if (stopped === null) return result.response;
    return { ...result.response, headers: { ...result.response.headers, [INGEST_STOPPED_HEADER]: stopped } };
  }

  /** Opens the namespace for a user's request; creating it counts against their quota. */
  private acquireFor(namespace: string, claims: Claims): Promise<NamespaceService> {
    return this.registry.acquire(namespace, {
      creator: claims.userID,
      admitCreation: () => this.budgets.admitNamespace(claims.userID),
    });
  }

  /**
   * What a failure means for its namespace. A full disk refuses the write (507) and leaves the
   * namespace open; a damaged database, or an engine failure, takes the namespace's service out
   * (the next request opens it afresh), and a damaged one is refused until it is fixed.
   */
  private failure(
    error: unknown,
    namespace: string | undefined,
    record: RequestRecord,
    service: NamespaceService | undefined,
  ): unknown {
    if (error instanceof EngineFailure) {
      if (service) this.registry.retire(service, false);
      return error;
    }
    const kind = error instanceof NamespaceUnavailableError ? "corrupt" : storageFailure(error);
    if (kind === "full") return new HttpError("quota_exceeded", STORAGE_FULL, { "retry-after": "60" });
    if (kind !== "corrupt" || namespace === undefined) return error;
    const unavailable =
      error instanceof NamespaceUnavailableError
        ? error
        : new NamespaceUnavailableError("corrupt", (error as Error).message, service?.store.location);
    this.registry.refuse(namespace, record.ns ?? "", unavailable);
    if (service) this.registry.retire(service, true);
    return unavailable;
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
