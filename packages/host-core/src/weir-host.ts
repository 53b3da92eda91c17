import type { Engine } from "@weir/engine-wasm";
import { IdString, parse } from "@weir/protocol";
import { checkAdmin } from "./check-admin.js";
import type { Claims } from "./claims.js";
import { type TableInfo, tableInfos } from "./column-codec.js";
import { type ResolvedConfig, resolveConfig, type WeirConfig } from "./config.js";
import { isEngineError } from "./engine-errors.js";
import { HttpError, ShuttingDownError } from "./http-error.js";
import {
  type AuthRequest,
  jsonParts,
  partsFromRequest,
  type RequestParts,
  type ResponseParts,
  toResponse,
} from "./http-parts.js";
import { errorDetail, internalErrorBody, newRequestId } from "./internal-error.js";
import { NamespaceService } from "./namespace-service.js";
import { type Clock, elapsedMs, systemClock } from "./ports/clock.js";
import { consoleJsonLogger, type Logger } from "./ports/logger.js";
import type { Scheduler } from "./ports/scheduler.js";
import type { Storage } from "./ports/storage.js";
import type { Wake } from "./ports/wake.js";
import { readJsonBody } from "./read-json-body.js";
import { knownNamespaceHash, namespaceHash, type RequestRecord, resultClass } from "./request-record.js";
import { matchRoute, type Route } from "./route.js";

/** What a host gives host-core: the engine and the ports of its runtime. */
export interface HostPorts {
  engine: Engine;
  storage: Storage;
  scheduler: Scheduler;
  wake: Wake;
  clock?: Clock;
  logger?: Logger;
  /** Sees every request's record (for metrics). */
  observe?(record: RequestRecord): void;
  /** The process's memory figures for the status route (Node: `process.memoryUsage()`). */
  memory?(): Record<string, number>;
  /** Keeps work that outlives its response alive (Workers' `ctx.waitUntil`); tracked by default. */
  waitUntil?(promise: Promise<unknown>): void;
}

/** Validates the config (throwing a ConfigError) and builds a host over these ports. */
export function createWeirHost(config: WeirConfig, ports: HostPorts): WeirHost {
  return new WeirHost(resolveConfig(config), ports);
}

/**
 * Answers weir's routes over standard Request/Response, opening each namespace's service on its
 * first request.
 */
export class WeirHost {
  readonly config: ResolvedConfig;
  private readonly tables: Map<string, TableInfo>;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly opening = new Map<string, Promise<NamespaceService>>();
  private readonly open = new Map<string, NamespaceService>();
  /** Requests being answered, and what `close` waits on until there are none. */
  private inflight = 0;
  private drained: (() => void) | undefined;
  private readonly background = new Set<Promise<unknown>>();
  private closing = false;

  constructor(
    config: ResolvedConfig,
    private readonly ports: HostPorts,
  ) {
    this.config = config;
    this.tables = tableInfos(config.schema);
    this.clock = ports.clock ?? systemClock;
    this.logger = ports.logger ?? consoleJsonLogger;
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
  namespace(name: string): Promise<NamespaceService> {
    const open = this.open.get(name);
    if (open) return Promise.resolve(open);
    let opening = this.opening.get(name);
    if (!opening) {
      opening = this.openNamespace(name).finally(() => this.opening.delete(name));
      this.opening.set(name, opening);
    }
    return opening;
  }

  /** How many namespaces have their database open. */
  get openNamespaces(): number {
    return this.open.size;
  }

  /** Closes namespaces unused for `idleMs` that no request is using; answers how many. */
  closeIdle(idleMs: number): number {
    if (!this.ports.storage.closesWhenIdle) return 0;
    const now = this.clock.monotonic();
    let closed = 0;
    for (const [name, service] of this.open) {
      if (service.active > 0 || now - service.lastUsed < idleMs) continue;
      this.open.delete(name);
      this.closeService(service);
      closed++;
    }
    return closed;
  }

  /** Refuses new requests (503), waits for the ones in flight and deferred effects, closes every database. */
  async close(): Promise<void> {
    this.closing = true;
    while (this.inflight > 0 || this.opening.size > 0) {
      const drained =
        this.inflight > 0
          ? new Promise<void>((resolve) => {
              this.drained = resolve;
            })
          : undefined;
      await Promise.allSettled([drained, ...this.opening.values()]);
    }
    await Promise.allSettled([...this.background]);
    for (const service of this.open.values()) this.closeService(service);
    this.open.clear();
  }

  private async serve(request: RequestParts): Promise<ResponseParts> {
    this.inflight++;
    try {
      return await this.answer(request);
    } finally {
      if (--this.inflight === 0 && this.drained) {
        const drained = this.drained;
        this.drained = undefined;
        drained();
      }
    }
  }

  private async answer(request: RequestParts): Promise<ResponseParts> {
    const started = this.clock.monotonic();
    const record: RequestRecord = { msg: "request", kind: "unknown", status: 0, result: "ok", totalMs: 0 };
    let service: NamespaceService | undefined;
    let response: ResponseParts;
    try {
      const route = matchRoute(request.method, new URL(request.url).pathname);
      record.kind = route.kind;
      if (this.closing) throw new ShuttingDownError();
      // Each await costs a turn of the microtask queue: only what is not at hand is awaited.
      record.ns = knownNamespaceHash(route.namespace) ?? (await namespaceHash(route.namespace));
      response = await this.route(request, route, record, (opened) => {
        service = opened;
        opened.active++;
      });
    } catch (error) {
      response = this.errorResponse(error, record);
    } finally {
      if (service) {
        service.active--;
        service.lastUsed = this.clock.monotonic();
      }
    }
    record.status = response.status;
    record.result = resultClass(response.status);
    record.totalMs = elapsedMs(this.clock, started);
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
    using: (service: NamespaceService) => void,
  ): Promise<ResponseParts> {
    if (route.type === "admin") {
      await checkAdmin(this.config, request);
      const body =
        request.method === "POST" ? await readJsonBody(request, this.config.maxBodyBytes, true) : undefined;
      const service = this.open.get(route.namespace) ?? (await this.namespace(route.namespace));
      using(service);
      const result = service.admin(route.action, request.method, body);
      Object.assign(record, result.log);
      return result.response;
    }
    const authenticated = this.authenticate(request);
    const claims = authenticated instanceof Promise ? await authenticated : authenticated;
    if (route.type === "wake") {
      const clientID = parse(IdString, new URL(request.url).searchParams.get("clientID") ?? "");
      if (!clientID.ok) throw new HttpError("bad_request", `clientID: ${clientID.message}`);
      const accepted = await this.ports.wake.accept(request.request(), {
        namespace: route.namespace,
        clientID: clientID.value,
        claims,
      });
      return { status: accepted.status, headers: {}, body: null, response: accepted };
    }
    const read = readJsonBody(request, this.config.maxBodyBytes);
    const body = read instanceof Promise ? await read : read;
    const service = this.open.get(route.namespace) ?? (await this.namespace(route.namespace));
    using(service);
    const dialect = route.kind.startsWith("replicache") ? "replicache" : "native";
    const result =
      route.kind === "pull" || route.kind === "replicache_pull"
        ? service.pull(dialect, body, claims)
        : service.push(dialect, body, claims);
    Object.assign(record, result.log);
    return result.response;
  }

  /** The request's claims; a promise only when the config's `authenticate` answers one. */
  private authenticate(request: AuthRequest): Claims | Promise<Claims> {
    let answer: Claims | null | Promise<Claims | null>;
    try {
      answer = this.config.authenticate(request);
    } catch (error) {
      throw this.authenticateThrew(error);
    }
    if (typeof (answer as PromiseLike<unknown> | null)?.then === "function") {
      return Promise.resolve(answer).then(
        (claims) => checkedClaims(claims),
        (error: unknown) => {
          throw this.authenticateThrew(error);
        },
      );
    }
    return checkedClaims(answer as Claims | null);
  }

  private authenticateThrew(error: unknown): HttpError {
    this.logger.log("warn", { msg: "authenticate threw", error: String(error) });
    return new HttpError("unauthorized", "authentication failed", { "www-authenticate": "Bearer" });
  }

  private async openNamespace(name: string): Promise<NamespaceService> {
    const [store, hash] = await Promise.all([this.ports.storage.open(name), namespaceHash(name)]);
    try {
      const service = new NamespaceService({
        namespace: name,
        hash,
        store,
        engine: this.ports.engine,
        config: this.config,
        tables: this.tables,
        scheduler: this.ports.scheduler,
        wake: this.ports.wake,
        clock: this.clock,
        logger: this.logger,
        ...(this.ports.memory ? { memory: this.ports.memory } : {}),
        waitUntil: (promise) => this.keepAlive(promise),
      });
      this.open.set(name, service);
      return service;
    } catch (error) {
      store.close();
      throw error;
    }
  }

  private keepAlive(promise: Promise<unknown>): void {
    if (this.ports.waitUntil) {
      this.ports.waitUntil(promise);
      return;
    }
    this.background.add(promise);
    promise.finally(() => this.background.delete(promise));
  }

  private closeService(service: NamespaceService): void {
    try {
      service.close();
    } catch (error) {
      this.logger.log("error", { msg: "closing a namespace failed", ns: service.hash, error: String(error) });
    }
  }

  /**
   * The answer to a failed request. Refusals (4xx) say what was wrong. Every 5xx carries a request
   * id, in the body and the `x-request-id` header, also found in the request's log line; one the
   * server did not expect answers a generic message, its error going only to the log.
   */
  private errorResponse(error: unknown, record: RequestRecord): ResponseParts {
    const known = error instanceof HttpError || (isEngineError(error) && error.status < 500) ? error : null;
    if (known && known.status < 500) {
      record.error = known.code;
      const headers = known instanceof HttpError ? known.headers : undefined;
      return jsonParts({ error: known.code, message: known.message }, known.status, headers);
    }
    const requestId = newRequestId();
    record.requestId = requestId;
    if (known instanceof HttpError) {
      record.error = known.code;
      return jsonParts({ error: known.code, message: known.message, requestId }, known.status, {
        ...known.headers,
        "x-request-id": requestId,
      });
    }
    record.error = "internal";
    this.logger.log("error", {
      msg: "request failed",
      requestId,
      ns: record.ns,
      kind: record.kind,
      error: errorDetail(error),
    });
    return jsonParts(internalErrorBody(requestId), 500, { "x-request-id": requestId });
  }
}

function checkedClaims(claims: Claims | null | undefined): Claims {
  if (claims === null || claims === undefined) {
    throw new HttpError("unauthorized", "missing or invalid credentials", { "www-authenticate": "Bearer" });
  }
  if (!parse(IdString, claims.userID).ok) {
    throw new Error("authenticate answered claims without a userID string of 1 to 256 characters");
  }
  return claims;
}
