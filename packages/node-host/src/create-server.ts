import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import {
  createWeirHost,
  errorDetail,
  InFlight,
  internalErrorBody,
  jsonParts,
  newRequestId,
  resolveConfig,
  TimerScheduler,
  type WeirConfig,
  type WeirHost,
} from "@weir/host-core";
import { answerClientError, readBody, toParts, writeParts } from "./http-bridge.js";
import { jsonLineLogger } from "./json-line-logger.js";
import { loadNodeEngine } from "./load-node-engine.js";
import { Metrics } from "./metrics.js";
import { checkNodeOptions, chooseAuthentication, type NodeHostOptions } from "./node-options.js";
import { defaultMaxOpenNamespaces } from "./open-file-limit.js";
import { type FileStorage, fileStorage, memoryStorage } from "./storage.js";
import { WsWake } from "./wake.js";
import { answerWakeUpgrade } from "./wake-upgrade.js";
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
  /** The runtime-agnostic host, once `listen` has loaded the engine. */
  readonly host: WeirHost | undefined;
  listen(options?: ListenOptions): Promise<{ url: string; port: number }>;
  /** Stops accepting, finishes requests in flight, closes wake sockets and databases. */
  close(): Promise<void>;
}

const DEFAULT_DATA_DIR = ".data";
const DEFAULT_IDLE_CLOSE_MS = 60_000;

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
  resolveConfig(config);
  checkNodeOptions(options);
  const maxBytes = options.maxDatabaseBytes;

  const wake = new WsWake(options.heartbeatMs ?? 30_000);
  const zero = new WsZero(options.heartbeatMs ?? 30_000);
  const scheduler = new TimerScheduler();
  let host: WeirHost | undefined;
  let ready: Promise<WeirHost> | undefined;
  const metrics =
    options.metrics === false
      ? undefined
      : new Metrics({
          openNamespaces: () => host?.openNamespaces ?? 0,
          unavailableNamespaces: () => host?.unavailableNamespaces.size ?? 0,
          wakeSockets: () => wake.total,
        });
  // Requests and upgrades being answered (weir's and the app's own routes), which `close` awaits.
  const inflight = new InFlight();
  let idleTimer: NodeJS.Timeout | undefined;
  let closing: Promise<void> | undefined;
  let files: FileStorage | undefined;

  const start = async (): Promise<WeirHost> => {
    if (options.storage !== "memory") {
      files = fileStorage(options.dataDir ?? DEFAULT_DATA_DIR, {
        logger,
        ...(maxBytes === undefined ? {} : { maxDatabaseBytes: maxBytes }),
      });
    }
    const [engine, storage] = await Promise.all([loadNodeEngine(), files ?? memoryStorage()]);
    host = createWeirHost(config, engine, {
      storage,
      ...(files ? { quotaStore: files.quotaStore } : {}),
      scheduler,
      wake,
      logger,
      memory: () => {
        const { rss, heapUsed, external } = process.memoryUsage();
        // maxRSS is in kilobytes: the process's peak, which a sample of rss would miss.
        const maxRssBytes = process.resourceUsage().maxRSS * 1024;
        return { rssBytes: rss, maxRssBytes, heapUsedBytes: heapUsed, externalBytes: external };
      },
      ...(metrics
        ? {
            observe: (record) => metrics.observe(record),
            observeIngest: (event) => metrics.observeIngest(event),
          }
        : {}),
    });
    const idleMs = options.idleCloseMs ?? DEFAULT_IDLE_CLOSE_MS;
    // A sweep looks at each open namespace, which costs next to nothing: sweeping often keeps the
    // close within a twentieth of idleMs (at most a second) of its time.
    idleTimer = setInterval(() => host?.closeIdle(idleMs), Math.min(1_000, Math.max(50, idleMs / 20)));
    idleTimer.unref();
    return host;
  };

  const ensureStarted = (): Promise<WeirHost> => {
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
    const weir = host ?? (await ensureStarted());
    const { bytes, overflow } = await readBody(req, weir.config.maxBodyBytes);
    const parts = toParts(req, bytes);
    const response = parts
      ? await weir.handleParts(parts)
      : jsonParts({ error: "bad_request", message: "the request target must be a path" }, 400);
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
        .then((weir) => answerWakeUpgrade(weir, wake, zero, req, socket, head))
        .catch(() => {
          socket.destroy();
        }),
    );
  });

  return {
    httpServer,
    get host() {
      return host;
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
        await host?.close();
        await files?.close();
        await inflight.drained();
        if (idleTimer) clearInterval(idleTimer);
        wake.close();
        zero.close();
        scheduler.close();
        httpServer.closeAllConnections();
        await stopped;
        lines.flush();
      })();
      return closing;
    },
  };
}
