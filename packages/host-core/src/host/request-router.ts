import { IdString, INGEST_STOPPED_HEADER, parse } from "@weir/protocol";
import { subscriptionFor } from "../audience/subscription.js";
import { authenticateRequest, authorizeNamespace } from "../auth/authenticate-request.js";
import { checkAdmin } from "../auth/check-admin.js";
import { checkNotify } from "../auth/check-notify.js";
import type { Claims } from "../auth/claims.js";
import type { ResolvedConfig } from "../config/weir-config.js";
import { HttpError } from "../http/http-error.js";
import type { RequestParts, ResponseParts } from "../http/http-parts.js";
import { readJsonBody } from "../http/read-json-body.js";
import type { RequestRecord } from "../http/request-record.js";
import type { Route } from "../http/route.js";
import { isIngestAction } from "../ingest/ingest-flow.js";
import type { NamespaceRegistry } from "../namespace/namespace-registry.js";
import type { NamespaceService } from "../namespace/namespace-service.js";
import type { Logger } from "../ports/logger.js";
import type { Admitted, UserBudgets } from "../quotas/user-budgets.js";
import { acceptZero } from "../zero/zero-accept.js";
import type { ZeroSessions } from "../zero/zero-sessions.js";

/** A Zero frame marks the namespace used (its idle time starts again) without holding it. */
export function touchService(service: NamespaceService): void {
  service.enter();
  service.leave();
}

export interface RequestRouterInit {
  config: ResolvedConfig;
  logger: Logger;
  registry: NamespaceRegistry;
  budgets: UserBudgets;
  zeroSessions: ZeroSessions;
}

/**
 * Answers one matched route: checks who asks (admin and notify secrets, a user's claims and
 * quota), opens the namespace and runs its flow. The host around it keeps the request's record,
 * log line and failures.
 */
export class RequestRouter {
  private readonly config: ResolvedConfig;
  private readonly logger: Logger;
  private readonly registry: NamespaceRegistry;
  private readonly budgets: UserBudgets;
  private readonly zeroSessions: ZeroSessions;

  constructor(init: RequestRouterInit) {
    this.config = init.config;
    this.logger = init.logger;
    this.registry = init.registry;
    this.budgets = init.budgets;
    this.zeroSessions = init.zeroSessions;
  }

  /**
   * Answers a matched route: `admitted` learns whose quota the request spends, `using` the
   * namespace it opened (which the host releases once the answer is out).
   */
  async route(
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
      ? dialect === "native"
        ? await service.pullNative(body, claims)
        : await service.pullReplicache(body, claims)
      : service.delegates
        ? await service.pushDelegated(dialect, body, claims, request.headers.get("authorization"))
        : await service.push(dialect, body, claims);
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
}
