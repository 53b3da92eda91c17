import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import {
  ConfigError,
  createWeirHost,
  errorDetail,
  errorResponse,
  internalErrorBody,
  jsonParts,
  type Logger,
  newRequestId,
  resolveConfig,
  TimerScheduler,
  type WeirConfig,
  type WeirHost,
} from "@weir/host-core";
import { devAuthenticator, type JwtOptions, jwtAuthenticator } from "./auth.js";
import { answerClientError, readBody, toParts, writeParts, writeRawAnswer } from "./http-bridge.js";
import { jsonLineLogger } from "./json-line-logger.js";
import { loadNodeEngine } from "./load-node-engine.js";
import { Metrics } from "./metrics.js";
import { defaultMaxOpenNamespaces } from "./open-file-limit.js";
import { type FileStorage, fileStorage, memoryStorage } from "./storage.js";
import { WsWake } from "./wake.js";

export interface NodeHostOptions extends Omit<WeirConfig, "authenticate"> {
  /** Your own authentication; otherwise `jwt`, or `devAuth` in development. */
  authenticate?: WeirConfig["authenticate"];
  /** Where `<namespace>.sqlite` files live (default `.data`, relative to the working directory). */
  dataDir?: string;
  /** `file` (better-sqlite3, the default) or `memory` (sql.js; lost when the server stops). */
  storage?: "file" | "memory";
  /** Development only: the Authorization header is the user id, unverified. */
  devAuth?: boolean;
  /** JWT verification: HS256 with a shared secret, or the keys of a JWKS URL. `sub` is the user id. */
  jwt?: JwtOptions;
  logger?: Logger;
  /**
   * Caps each namespace's database file at about this size (SQLite's max_page_count; default no
   * cap): past it, pushes answer 507 and store nothing, while pulls go on.
   */
  maxDatabaseBytes?: number;
  /** Close a namespace's database this long after its last request (default 60 s, within a second; file storage only). */
  idleCloseMs?: number;
  /** Protocol-level ping of wake sockets; one that missed a beat is dropped (default 30 s). */
  heartbeatMs?: number;
  /** Serve Prometheus metrics at `GET /metrics` (default true). */
  metrics?: boolean;
  /**
   * Your own routes (static files of an app, a health check), tried before weir's: answer true
   * when it answered the request.
   */
  onRequest?(req: IncomingMessage, res: ServerResponse): boolean | Promise<boolean>;
}

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
  if (options.storage !== undefined && options.storage !== "file" && options.storage !== "memory") {
    throw new ConfigError(`invalid weir config:\n - storage: expected "file" or "memory"`);
  }
  const maxBytes = options.maxDatabaseBytes;
  if (maxBytes !== undefined && !(Number.isSafeInteger(maxBytes) && maxBytes >= 64 * 1024)) {
    throw new ConfigError("invalid weir config:\n - maxDatabaseBytes: expected an integer of at least 65536");
  }
  if (options.devAuth) {
    logger.log("warn", {
      msg: "development authentication is on: the Authorization header is taken as the user id, unverified; never use it in production",
    });
  }

  const wake = new WsWake(options.heartbeatMs ?? 30_000);
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
  // Requests and upgrades being answered, and what `close` waits on until there are none.
  let pending = 0;
  let drained: (() => void) | undefined;
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
    host = createWeirHost(config, {
      engine,
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
      ...(metrics ? { observe: (record) => metrics.observe(record) } : {}),
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

  const track = (work: Promise<void>) => {
    pending++;
    const done = () => {
      if (--pending > 0 || !drained) return;
      const resolve = drained;
      drained = undefined;
      resolve();
    };
    work.then(done, done);
  };
  const allAnswered = async () => {
    while (pending > 0) {
      await new Promise<void>((resolve) => {
        drained = resolve;
      });
    }
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
    const written = writeParts(res, response, overflow);
    if (written) await written;
  };

  const httpServer = createHttpServer();
  httpServer.on("request", (req, res) => {
    track(
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
    track(
      (async () => {
        const weir = await ensureStarted();
        const request = toParts(req, null)?.request();
        if (!request) {
          await rejectUpgrade(socket, errorResponse(400, "bad_request", "bad request target"));
          return;
        }
        const upgrade = { req, socket, head, accepted: false };
        wake.expect(request, upgrade);
        const response = await weir.handle(request);
        if (!upgrade.accepted) await rejectUpgrade(socket, response);
      })().catch(() => {
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
        await allAnswered();
        await host?.close();
        await files?.close();
        await allAnswered();
        if (idleTimer) clearInterval(idleTimer);
        wake.close();
        scheduler.close();
        httpServer.closeAllConnections();
        await stopped;
        lines.flush();
      })();
      return closing;
    },
  };
}

function chooseAuthentication(options: NodeHostOptions, logger: Logger): WeirConfig["authenticate"] {
  const chosen = [
    options.authenticate && "authenticate",
    options.jwt && "jwt",
    options.devAuth && "devAuth",
  ].filter(Boolean);
  if (chosen.length !== 1) {
    throw new ConfigError(
      chosen.length === 0
        ? "invalid weir config:\n - authentication: set jwt ({ secret } or { jwksUrl }), authenticate, or devAuth: true for development"
        : `invalid weir config:\n - authentication: choose one of ${chosen.join(", ")}`,
    );
  }
  if (options.authenticate) return options.authenticate;
  if (options.jwt) {
    const jwt = options.jwt as Partial<{ secret: unknown; jwksUrl: unknown }>;
    if (typeof jwt.secret !== "string" && typeof jwt.jwksUrl !== "string") {
      throw new ConfigError(
        "invalid weir config:\n - jwt: expected { secret: string } or { jwksUrl: string }",
      );
    }
    return jwtAuthenticator(options.jwt, logger);
  }
  return devAuthenticator();
}

async function rejectUpgrade(socket: Duplex, response: Response): Promise<void> {
  writeRawAnswer(socket, response.status, await response.text().catch(() => ""));
}
