import {
  type AuthRequest,
  type Claims,
  ConfigError,
  type CounterFlushPolicy,
  consoleJsonLogger,
  createWeirHost,
  errorResponse,
  type Logger,
  type NamespaceService,
  namespaceHash,
  partsFromRequest,
  type ResponseParts,
  TimerScheduler,
  userSocketProblems,
  WAKE_PACE,
  type WeirHost,
  ZERO_PACE,
} from "@weir/host-core";
import { AlarmSlots } from "./alarm-slots.js";
import { configFor, type EdgeConfig, type EdgeConfigSource } from "./edge-config.js";
import {
  DROPPED_HEADER,
  decodeForwarded,
  FORWARDED_HEADER,
  type Forwarded,
  forwardedOf,
} from "./forwarded-request.js";
import type { EngineFor } from "./load-edge-engine.js";
import { ObjectBinding } from "./object-binding.js";
import { durableObjectStorage } from "./storage.js";
import { EdgeUserSockets } from "./user-sockets.js";
import { closeQuietly, HibernatableWake, PING, PONG } from "./wake.js";
import { HibernatableZero, isZeroSocket, ZERO_PING, ZERO_PONG } from "./zero-sockets.js";

/** Counters are stored with every write request, and at most 10 s after pulls changed them. */
const COUNTER_FLUSH: CounterFlushPolicy = { afterWrites: true, intervalMs: 10_000 };

export interface SyncDurableObject {
  fetch(request: Request): Promise<Response>;
  alarm(): Promise<void>;
  webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): void | Promise<void>;
  webSocketClose(ws: WebSocket, code: number, reason: string, wasClean: boolean): void;
  webSocketError(ws: WebSocket, error: unknown): void;
}

export type SyncDurableObjectClass<Env> = new (ctx: DurableObjectState, env: Env) => SyncDurableObject;

/**
 * The Durable Object class of one namespace: its SQLite database, knobs, counters and wake
 * sockets. It trusts only what its Worker forwards (claims, the admin check), and binds itself to
 * the first namespace it serves, refusing any other. `engineFor` gives the isolate's engine for
 * the config (the entry the Worker imports decides which modules it ships).
 */
export function syncObjectClass<Env>(
  source: EdgeConfigSource<Env>,
  engineFor: EngineFor,
): SyncDurableObjectClass<Env> {
  return class WeirSyncObject implements SyncDurableObject {
    private readonly config: EdgeConfig<Env>;
    private readonly logger: Logger;
    private readonly binding: ObjectBinding;
    private readonly forwarded = new WeakMap<object, Forwarded>();
    private host!: WeirHost;
    private service: NamespaceService | undefined;
    private readonly wake: HibernatableWake;
    private readonly zero: HibernatableZero;
    private readonly users: EdgeUserSockets;
    private readonly alarms: AlarmSlots;

    constructor(
      private readonly ctx: DurableObjectState,
      private readonly env: Env,
    ) {
      this.config = configFor(source, env);
      this.logger = this.config.logger ?? consoleJsonLogger;
      this.binding = new ObjectBinding(ctx.storage);
      this.alarms = new AlarmSlots(ctx.storage);
      const problems = userSocketProblems(this.config);
      if (problems.length > 0) throw new ConfigError(problems);
      this.users = new EdgeUserSockets(ctx, this.config);
      this.wake = new HibernatableWake(ctx, this.users);
      this.zero = new HibernatableZero(ctx, this.logger, this.users);
      // The platform answers a keepalive itself, so it never wakes a sleeping object.
      const zeroPings = this.config.autoResponse === "zero";
      ctx.setWebSocketAutoResponse(
        new WebSocketRequestResponsePair(zeroPings ? ZERO_PING : PING, zeroPings ? ZERO_PONG : PONG),
      );
      void ctx.blockConcurrencyWhile(() => this.init());
    }

    private async init(): Promise<void> {
      const [engine] = await Promise.all([engineFor(this.config), this.binding.ready()]);
      const authenticated = (request: AuthRequest): Claims | null | Promise<Claims | null> => {
        const forwarded = this.forwarded.get(request) ?? forwardedOf(request);
        if (forwarded) return forwarded.claims ?? null;
        // Only a Zero connection's new credential (`updateAuth`) is checked here, as the app does.
        return this.config.authenticate?.(request) ?? null;
      };
      const upstream = this.config.upstream;
      this.host = createWeirHost(
        {
          ...this.config,
          authenticate: authenticated,
          // The Worker checked the key and the namespace; the object sees only its verdicts.
          adminKey: undefined,
          authorizeNamespace: undefined,
          isAdmin: (request) => this.forwarded.get(request)?.admin === true,
          ...(upstream
            ? {
                upstream: {
                  ...upstream,
                  notifyToken: undefined,
                  authorizeNotify: (request: AuthRequest) => this.forwarded.get(request)?.notify === true,
                },
              }
            : {}),
        },
        engine,
        {
          storage: durableObjectStorage(this.ctx.storage, () => this.binding.namespace),
          scheduler: new TimerScheduler(),
          wake: this.wake,
          logger: this.logger,
          waitUntil: (promise) => this.ctx.waitUntil(promise),
          // An eviction gives no notice: counters are stored with every write request (which
          // writes anyway) and within 10 s of pulls.
          counterFlush: COUNTER_FLUSH,
          // Polls while wake sockets are open run on the alarm, which outlives an eviction.
          pollScheduler: this.alarms.pollScheduler((error) =>
            this.logger.log("error", { msg: "setting the alarm failed", error: String(error) }),
          ),
        },
      );
      if (this.binding.namespace !== null) this.service = await this.host.namespace(this.binding.namespace);
    }

    async fetch(request: Request): Promise<Response> {
      const header = request.headers.get(FORWARDED_HEADER);
      const forwarded = header === null ? null : decodeForwarded(header);
      if (!forwarded) {
        return errorResponse(403, "forbidden", "this object answers only requests its Worker forwards");
      }
      const namespace = new URL(request.url).pathname.split("/")[1] ?? "";
      if (this.binding.namespace === null) {
        const hash = await namespaceHash(namespace);
        if (hash !== forwarded.ns) {
          return errorResponse(400, "bad_request", "the forwarded namespace does not match the path");
        }
        // Another request may have bound the object while the hash was computed.
        if (this.binding.namespace === null) this.binding.bind(namespace, hash);
      }
      if (namespace !== this.binding.namespace || forwarded.ns !== this.binding.hash) {
        this.logger.log("error", {
          msg: "request for another namespace reached this object",
          ns: forwarded.ns,
        });
        return errorResponse(500, "internal", "this object serves another namespace");
      }
      // Zero connections kept through hibernation are back before anything can poke them.
      if (this.service && !this.service.isClosed) this.zero.ready(this.service.zero);
      const parts = partsFromRequest(request);
      this.forwarded.set(parts, forwarded);
      let answer: ResponseParts;
      try {
        answer = await this.host.handleParts(parts);
      } finally {
        // With what the request wrote (the install, the first answer): one commit. An alarm task
        // starts with the first request, so its object is bound from then on.
        if (this.binding.store(this.config.alarm !== undefined)) this.startAlarmTask();
      }
      // A body the answer did not need (a refusal) is let go of, never left for the runtime to
      // read after the answer went out.
      if (request.body && !request.bodyUsed) await request.body.cancel().catch(() => {});
      // The service the request opened (a wake socket opens none), for the counters and the alarm;
      // a new one when the last was taken out of service after a failure.
      if (!this.service || this.service.isClosed) {
        this.service = await this.host.namespace(namespace).catch(() => undefined);
      }
      // A dropped answer (an admin knob) is the Worker's to break: a failing body would reach the
      // Worker as an empty one.
      if (answer.drop) return new Response(null, { status: 200, headers: { [DROPPED_HEADER]: "1" } });
      if (answer.upgrade) return this.wake.accept(answer.upgrade);
      if (answer.zero) return this.zero.accept(answer.zero);
      return new Response(answer.body, { status: answer.status, headers: answer.headers });
    }

    /**
     * The alarm serves two slots: upstream polls (while wake sockets are open) and the config's
     * alarm task. A task that throws leaves its slot due, so the platform's retry runs it again.
     */
    async alarm(): Promise<void> {
      const namespace = this.binding.namespace;
      if (namespace === null) return;
      const service = await this.openService(namespace);
      const now = Date.now();
      const poll = this.alarms.get("poll");
      if (typeof poll === "number" && poll <= now) {
        // Cleared first: the poll sets its next time itself while sockets stay open.
        await this.alarms.set("poll", null);
        await service.poll();
      }
      const task = this.config.alarm;
      const taskAt = this.alarms.get("task");
      if (task && (taskAt === undefined || (taskAt !== null && taskAt <= now))) {
        const next = await task.run({ namespace, env: this.env, write: (fn) => service.write(fn) });
        await this.alarms.set("task", typeof next === "number" ? Date.now() + Math.max(0, next) : null);
      }
      await this.alarms.arm();
    }

    async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
      const tags = this.ctx.getTags(ws);
      const zero = isZeroSocket(tags);
      if (!this.users.take(ws, tags, zero ? ZERO_PACE : WAKE_PACE)) {
        if (zero) this.zero.closed(ws);
        else this.wake.closed(ws);
        return;
      }
      if (zero) {
        const service = await this.openService(this.binding.namespace!);
        this.zero.message(ws, message, service.zero, this.host.config.maxBodyBytes);
        return;
      }
      // Reached only when the auto-response did not answer (a ping with other framing); wake
      // sockets carry nothing else.
      if (message === PING) ws.send(PONG);
    }

    webSocketClose(ws: WebSocket, code: number, reason: string): void {
      if (isZeroSocket(this.ctx.getTags(ws))) this.zero.closed(ws);
      else this.wake.closed(ws);
      this.users.closed(ws);
      this.logCloseFailure(closeQuietly(ws, code, reason), code);
    }

    webSocketError(ws: WebSocket): void {
      if (isZeroSocket(this.ctx.getTags(ws))) this.zero.closed(ws);
      else this.wake.closed(ws);
      this.users.closed(ws);
      this.logCloseFailure(closeQuietly(ws, 1011, ""), 1011);
    }

    /** The namespace's service (a new one after a failure), with its Zero connections restored. */
    private async openService(namespace: string): Promise<NamespaceService> {
      if (!this.service || this.service.isClosed) this.service = await this.host.namespace(namespace);
      this.zero.ready(this.service.zero);
      return this.service;
    }

    private logCloseFailure(error: unknown, code: number): void {
      if (error === undefined) return;
      this.logger.log("error", { msg: "closing a wake socket failed", code, error: String(error) });
    }

    /** Starts the alarm task, the first time the object is bound. */
    private startAlarmTask(): void {
      const task = this.config.alarm;
      if (task) void this.alarms.set("task", Date.now() + Math.max(0, task.firstDelayMs));
    }
  };
}
