import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from "node:http";
import type { AddressInfo } from "node:net";
import { availableParallelism } from "node:os";
import type { Duplex } from "node:stream";
import { fileURLToPath } from "node:url";
import {
  DEFAULT_MAX_SOCKETS_PER_USER,
  DEFAULT_USER_MESSAGES_PER_SECOND,
  errorDetail,
  InFlight,
  internalErrorBody,
  jsonParts,
  newRequestId,
  resolveConfig,
  type WeirConfig,
  type WeirHost,
} from "@weir/host-core";
import { type AnswerParts, answerClientError, readBody, toParts, writeParts } from "./http-bridge.js";
import { jsonLineLogger } from "./json-line-logger.js";
import { Metrics } from "./metrics.js";
import { checkNodeOptions, chooseAuthentication, type NodeHostOptions } from "./node-options.js";
import { defaultMaxOpenNamespaces, defaultMaxSockets } from "./open-file-limit.js";
import { relayRequest, relayUpgrade } from "./routed-request.js";
import { DEFAULT_MAX_SOCKET_BUFFER_BYTES } from "./slow-reader.js";
import { type NodeHost, startNodeHost } from "./start-node-host.js";
import { UserSockets } from "./user-sockets.js";
import { WsWake } from "./wake.js";
import { answerWakeUpgrade } from "./wake-upgrade.js";
import { WorkerPool } from "./worker-pool.js";
import { WsZero } from "./zero-sockets.js";

export type { NodeHostOptions } from "./node-options.js";

export interface ListenOptions {
  /** 0 (the default) picks a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
}

export interface WeirServer {
  readonly httpServer: Server;
  /** The runtime-agnostic host, once `listen` has loaded the engine; undefined with worker threads. */
  readonly host: WeirHost | undefined;
  /** How many worker threads run the namespaces (0: this thread does). */
  readonly workers: number;
  listen(options?: ListenOptions): Promise<{ url: string; port: number }>;
  /**
   * An upstream in this process committed changes for these namespaces: each one open ingests
   * now and wakes its clients (host-core's `upstreamCommitted`, in whichever thread runs it).
   */
  upstreamCommitted(namespaces: Iterable<string>): void;
  /** Stops accepting, finishes requests in flight, closes wake sockets and databases. */
  close(): Promise<void>;
}

const DEFAULT_STEP_BUDGET_MS = 50;
const DEFAULT_OVERFLOW_QUIET_MS = 60_000;

/** How many workers the options ask for. */
function workerCount(options: NodeHostOptions): number {
  if (options.workers !== undefined) return options.workers;
  return options.workerConfig ? availableParallelism() : 0;
}

/** A weir server over node:http. The config is checked now (throwing a ConfigError); the engine loads in `listen`. */
export function createServer(options: NodeHostOptions): WeirServer {
  const lines = jsonLineLogger();
  const logger = options.logger ?? lines;
  const authenticate = chooseAuthentication(options, logger);
  const config: WeirConfig = {
    ...options,
    authenticate,
    maxOpenNamespaces: options.maxOpenNamespaces ?? defaultMaxOpenNamespaces(),
  };
  const resolved = resolveConfig(config);
  checkNodeOptions(options);
  const workers = workerCount(options);
  const buffered = options.maxSocketBufferBytes ?? DEFAULT_MAX_SOCKET_BUFFER_BYTES;
  const heartbeatMs = options.heartbeatMs ?? 30_000;

  let node: NodeHost | undefined;
  let pool: WorkerPool | undefined;
  let ready: Promise<void> | undefined;
  // Every socket of a user counts toward one cap and shares one pace, whatever its namespace;
  // all of them toward the server's cap, which keeps descriptors for requests and namespace files.
  const users = new UserSockets(
    options.maxSocketsPerUser === undefined ? DEFAULT_MAX_SOCKETS_PER_USER : options.maxSocketsPerUser,
    options.userMessagesPerSecond ?? DEFAULT_USER_MESSAGES_PER_SECOND,
    options.maxSockets === undefined ? defaultMaxSockets(resolved.maxOpenNamespaces) : options.maxSockets,
  );
  const wake = new WsWake(
    heartbeatMs,
    buffered,
    users,
    workers > 0
      ? {
          opened: (id, target) =>
            pool?.wakeOpened(id, target.namespace, target.clientID, target.subscription),
          closed: (id, target) => pool?.wakeClosed(id, target.namespace),
        }
      : undefined,
  );
  const zero = new WsZero(heartbeatMs, buffered, resolved.maxBodyBytes, users);
  const metrics =
    options.metrics === false
      ? undefined
      : new Metrics({
          openNamespaces: () => node?.host.openNamespaces ?? pool?.openNamespaces ?? 0,
          unavailableNamespaces: () =>
            node?.host.unavailableNamespaces.size ?? pool?.unavailableNamespaces ?? 0,
          wakeSockets: () => wake.total,
          zeroSockets: () => zero.total,
          socketRefusals: () => users.refusals,
          overflowNamespaces: () => pool?.overflowNamespaces ?? 0,
          socketUnsentBytes: () => wake.unsentBytes + zero.unsentBytes,
        });
  // Requests and upgrades being answered (weir's and the app's own routes), which `close` awaits.
  const inflight = new InFlight();
  let closing: Promise<void> | undefined;

  const start = async (): Promise<void> => {
    if (workers === 0) {
      node = await startNodeHost(options, config, logger, {
        wake,
        ...(metrics
          ? {
              observe: (record) => metrics.observe(record),
              observeIngest: (event) => metrics.observeIngest(event),
            }
          : {}),
      });
      return;
    }
    const module = options.workerConfig!.module;
    pool = new WorkerPool(
      {
        module:
          module instanceof URL
            ? module.protocol === "file:"
              ? fileURLToPath(module)
              : module.href
            : module,
        argument: options.workerConfig!.argument,
        ...(options.workerConfig!.ports ? { ports: options.workerConfig!.ports } : {}),
        count: workers,
        maxOpenNamespaces: resolved.maxOpenNamespaces,
        // Memory databases live in their worker: a namespace cannot move.
        ...(options.storage === "memory"
          ? {}
          : {
              overflow: {
                stepBudgetMs: options.stepBudgetMs ?? DEFAULT_STEP_BUDGET_MS,
                quietMs: options.overflowQuietMs ?? DEFAULT_OVERFLOW_QUIET_MS,
              },
            }),
      },
      {
        wake: (ids) => wake.sendTo(ids),
        ...(metrics
          ? {
              report: (records, ingest) => {
                for (const record of records) metrics.observe(record);
                for (const event of ingest) metrics.observeIngest(event);
              },
            }
          : {}),
      },
      logger,
    );
    try {
      await pool.start();
    } catch (error) {
      await pool.close().catch(() => {});
      throw error;
    }
  };

  const ensureStarted = (): Promise<void> => {
    ready ??= start();
    return ready;
  };

  // Awaits only what is not at hand: each await costs a turn of the microtask queue.
  const answer = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (options.onRequest && (await options.onRequest(req, res))) return;
    if (metrics && req.method === "GET" && req.url === "/metrics") {
      const { body, contentType } = await metrics.render();
      res.writeHead(200, { "content-type": contentType }).end(body);
      return;
    }
    if (!node && !pool) await ensureStarted();
    const { bytes, overflow } = await readBody(req, resolved.maxBodyBytes);
    let response: AnswerParts;
    if (pool) {
      // A Zero connect comes as an upgrade; a worker's answer here never carries one.
      response = req.url?.startsWith("/")
        ? ((await relayRequest(pool, req, bytes)).answer as AnswerParts)
        : jsonParts({ error: "bad_request", message: "the request target must be a path" }, 400);
    } else {
      const parts = toParts(req, bytes);
      response = parts
        ? await node!.host.handleParts(parts)
        : jsonParts({ error: "bad_request", message: "the request target must be a path" }, 400);
    }
    writeParts(res, response, overflow);
  };

  const httpServer = createHttpServer();
  httpServer.on("request", (req, res) => {
    inflight.track(
      answer(req, res).catch((error: unknown) => {
        const requestId = newRequestId();
        logger.log("error", { msg: "request bridge failed", requestId, error: errorDetail(error) });
        if (!res.headersSent)
          res.writeHead(500, { "content-type": "application/json", "x-request-id": requestId });
        res.end(JSON.stringify(internalErrorBody(requestId)));
      }),
    );
  });
  httpServer.on("clientError", answerClientError);
  httpServer.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on("error", () => socket.destroy());
    inflight.track(
      ensureStarted()
        .then(() =>
          pool
            ? relayUpgrade(pool, wake, zero, req, socket, head)
            : answerWakeUpgrade(node!.host, wake, zero, req, socket, head),
        )
        .catch(() => {
          socket.destroy();
        }),
    );
  });

  return {
    httpServer,
    get host() {
      return node?.host;
    },
    workers,
    upstreamCommitted(namespaces) {
      if (pool) pool.upstreamCommitted(namespaces);
      else node?.host.upstreamCommitted(namespaces);
    },
    async listen(listenOptions = {}) {
      await ensureStarted();
      const hostname = listenOptions.host ?? "127.0.0.1";
      await new Promise<void>((resolve, reject) => {
        httpServer.once("error", reject);
        httpServer.listen(listenOptions.port ?? 0, hostname, () => {
          httpServer.off("error", reject);
          resolve();
        });
      });
      const { port } = httpServer.address() as AddressInfo;
      const shown = hostname === "0.0.0.0" || hostname === "::" ? "127.0.0.1" : hostname;
      const urlHost = shown.includes(":") ? `[${shown}]` : shown;
      return { url: `http://${urlHost}:${port}`, port };
    },
    close() {
      closing ??= (async () => {
        const stopped = new Promise<void>((resolve) => {
          if (!httpServer.listening) return resolve();
          httpServer.close(() => resolve());
        });
        httpServer.closeIdleConnections();
        await inflight.drained();
        await node?.close();
        await pool?.close();
        await inflight.drained();
        wake.close();
        zero.close();
        httpServer.closeAllConnections();
        await stopped;
        lines.flush();
      })();
      return closing;
    },
  };
}
