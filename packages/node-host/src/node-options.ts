import type { IncomingMessage, ServerResponse } from "node:http";
import type { MessagePort } from "node:worker_threads";
import { ConfigError, type Logger, userSocketProblems, type WeirConfig } from "@weir/host-core";
import { devAuthenticator, type JwtOptions, jwtAuthenticator } from "./auth.js";

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
  /**
   * Unsent bytes a wake or Zero socket may hold (a client that stopped reading) before it is
   * closed with 1013; the client reconnects and catches up from its cookie (default 8 MiB).
   */
  maxSocketBufferBytes?: number;
  /**
   * Wake and Zero sockets one user may hold open at once (default 100; null: no cap). One more
   * is refused: a wake upgrade with 429 `too_many_sockets`, a Zero connection with its
   * ServerOverloaded error.
   */
  maxSocketsPerUser?: number | null;
  /**
   * Messages a second all of one user's sockets together are taken in at (default 200, bursts of
   * five seconds of it), besides each socket's own pace: past it, their reads pause.
   */
  userMessagesPerSecond?: number;
  /**
   * Wake and Zero sockets the server holds open at once, of every user (default: what the limit
   * on open files leaves once `maxOpenNamespaces` namespaces have their descriptors, at least 64;
   * null: no cap). One more is refused: a wake upgrade with 503 `server_busy`, a Zero connection
   * with its ServerOverloaded error.
   */
  maxSockets?: number | null;
  /**
   * Worker threads that run the namespaces, each namespace in one of them, while this thread
   * routes requests and keeps the sockets. Default: one per core when `workerConfig` is set,
   * else 0 (every namespace on this thread). More than 0 needs `workerConfig`.
   */
  workers?: number;
  /**
   * Where each worker thread loads these options from, since a config's functions cannot cross
   * threads: a module (path or URL) whose default export is the options, or a function answering
   * them, called with `argument` (any value a thread can receive) and `ports`. `ports`, called once
   * for each worker thread as it starts, gives it message ports of its own (a channel to another
   * thread, such as `@weir/postgres`'s `upstream.connect()`), moved to it.
   */
  workerConfig?: { module: string | URL; argument?: unknown; ports?: () => Record<string, MessagePort> };
  /**
   * With worker threads and file storage: a namespace one of whose steps (a transaction: a pull's
   * or a push's work, or a page of it) held its worker longer than this, or was a query stopped
   * past `queryBudgetMs`, or whose steps held it more than half of a second in which another
   * namespace of the worker stepped (BusyShare), twice within `overflowQuietMs`, moves to the overflow worker, one more thread shared only by namespaces
   * that did the same, so that it no longer delays the namespaces of its own worker. Its Zero
   * sockets are closed with 1012 and reconnect. It moves back once none of its steps passed this
   * for `overflowQuietMs`. Default 50 ms; 0 moves no namespace.
   */
  stepBudgetMs?: number;
  /** See `stepBudgetMs` (default 60 s). */
  overflowQuietMs?: number;
  /** Serve Prometheus metrics at `GET /metrics` (default true). */
  metrics?: boolean;
  /**
   * Your own routes (static files of an app, a health check), tried before weir's: answer true
   * when it answered the request.
   */
  onRequest?(req: IncomingMessage, res: ServerResponse): boolean | Promise<boolean>;
}

/** The checks of the Node host's own options (host-core checks the rest); throws a ConfigError. */
export function checkNodeOptions(options: NodeHostOptions): void {
  const problems: string[] = [];
  if (options.storage !== undefined && options.storage !== "file" && options.storage !== "memory") {
    problems.push('storage: expected "file" or "memory"');
  }
  const maxBytes = options.maxDatabaseBytes;
  if (maxBytes !== undefined && !(Number.isSafeInteger(maxBytes) && maxBytes >= 64 * 1024)) {
    problems.push("maxDatabaseBytes: expected an integer of at least 65536");
  }
  const buffered = options.maxSocketBufferBytes;
  if (buffered !== undefined && !(Number.isSafeInteger(buffered) && buffered >= 1024)) {
    problems.push("maxSocketBufferBytes: expected an integer of at least 1024");
  }
  problems.push(...userSocketProblems(options));
  const sockets = options.maxSockets;
  if (sockets !== undefined && sockets !== null && !(Number.isSafeInteger(sockets) && sockets >= 1)) {
    problems.push("maxSockets: expected an integer of at least 1, or null for no cap");
  }
  const workers = options.workers;
  if (workers !== undefined && !(Number.isSafeInteger(workers) && workers >= 0 && workers <= 256)) {
    problems.push("workers: expected an integer from 0 to 256");
  } else if (workers !== undefined && workers > 0 && options.workerConfig === undefined) {
    problems.push(
      "workers: set workerConfig too, the module each worker thread loads the options from (a config's functions cannot cross threads)",
    );
  }
  for (const key of ["stepBudgetMs", "overflowQuietMs"] as const) {
    const value = options[key];
    if (value !== undefined && !(Number.isSafeInteger(value) && value >= 0)) {
      problems.push(`${key}: expected a whole number of milliseconds, 0 or more`);
    }
  }
  const module = options.workerConfig?.module;
  if (options.workerConfig !== undefined && typeof module !== "string" && !(module instanceof URL)) {
    problems.push("workerConfig.module: expected a path or a URL");
  }
  const ports = options.workerConfig?.ports;
  if (ports !== undefined && typeof ports !== "function") {
    problems.push("workerConfig.ports: expected a function answering each worker's ports");
  }
  if (problems.length > 0) throw new ConfigError(problems);
}

/** The one authentication the options choose: `authenticate`, `jwt` or `devAuth`. */
export function chooseAuthentication(options: NodeHostOptions, logger: Logger): WeirConfig["authenticate"] {
  const chosen = [
    options.authenticate && "authenticate",
    options.jwt && "jwt",
    options.devAuth && "devAuth",
  ].filter(Boolean);
  if (chosen.length !== 1) {
    throw new ConfigError([
      chosen.length === 0
        ? "authentication: set jwt ({ secret } or { jwksUrl }), authenticate, or devAuth: true for development"
        : `authentication: choose one of ${chosen.join(", ")}`,
    ]);
  }
  if (options.authenticate) return options.authenticate;
  if (options.jwt) {
    const jwt = options.jwt as Partial<{ secret: unknown; jwksUrl: unknown }>;
    if (typeof jwt.secret !== "string" && typeof jwt.jwksUrl !== "string") {
      throw new ConfigError(["jwt: expected { secret: string } or { jwksUrl: string }"]);
    }
    return jwtAuthenticator(options.jwt, logger);
  }
  logger.log("warn", {
    msg: "development authentication is on: the Authorization header is taken as the user id, unverified; never use it in production",
  });
  return devAuthenticator();
}
