import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import {
  encodeWatermark,
  isValidNamespace,
  parseUpstreamQuery,
  safeEqual,
  UpstreamCallError,
  UpstreamGoneError,
  type UpstreamSource,
} from "@weir/protocol";
import { listening } from "./listening.js";

/** What an operator may read of a source: its status as JSON, and Prometheus metrics. */
export interface UpstreamOperations {
  status?(): unknown | Promise<unknown>;
  metrics?: { readonly contentType: string; metrics(): Promise<string> };
}

export interface UpstreamServerOptions {
  /** One source at the root (`/changes`), or one per namespace (`/<namespace>/changes`). */
  source: UpstreamSource | ((namespace: string) => UpstreamSource | null);
  /** Every request must carry `Authorization: Bearer <token>` (none checked when absent). */
  token?: string;
  /** Served at `GET /status` and `GET /metrics`, behind the same token. */
  operations?: UpstreamOperations;
}

export interface UpstreamServer {
  readonly httpServer: Server;
  /** Listens (port 0 picks a free one; host 127.0.0.1 unless given) and answers the URL. */
  listen(options?: { port?: number; host?: string }): Promise<{ url: string; port: number }>;
  /** Stops accepting and ends open connections; the sources stay open. */
  close(): Promise<void>;
}

const JSON_HEADERS = { "content-type": "application/json", "cache-control": "no-store" };

function send(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { ...JSON_HEADERS, ...headers });
  res.end(
    JSON.stringify(body, (_key, value) => (typeof value === "bigint" ? encodeWatermark(value) : value)),
  );
}

function authorized(req: IncomingMessage, token: string | undefined): boolean {
  if (token === undefined) return true;
  const header = req.headers.authorization ?? "";
  return safeEqual(header.startsWith("Bearer ") ? header.slice(7) : "", token);
}

/**
 * weir's upstream contract over `node:http`: `GET /changes` and `GET /snapshot` (under
 * `/<namespace>` for per-namespace sources), and the operations routes. Watermarks go out as JSON
 * numbers while safe and decimal strings beyond; every error is JSON `{ error, message }` (410
 * adds `oldest`); bad input is a 4xx and changes nothing.
 */
export function createUpstreamServer(options: UpstreamServerOptions): UpstreamServer {
  const { token, operations } = options;
  const perNamespace = typeof options.source === "function";

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? "/", "http://upstream.invalid");
    if (!authorized(req, token)) {
      send(
        res,
        401,
        { error: "unauthorized", message: "a valid bearer token is required" },
        { "www-authenticate": "Bearer" },
      );
      return;
    }
    if (req.method !== "GET" && req.method !== "HEAD") {
      send(
        res,
        405,
        { error: "method_not_allowed", message: `${req.method} is not allowed here` },
        { allow: "GET" },
      );
      return;
    }
    const parts = url.pathname.split("/").slice(1);
    if (parts.length === 1 && parts[0] === "status" && operations?.status) {
      send(res, 200, await operations.status());
      return;
    }
    if (parts.length === 1 && parts[0] === "metrics" && operations?.metrics) {
      res.writeHead(200, { "content-type": operations.metrics.contentType });
      res.end(await operations.metrics.metrics());
      return;
    }
    const route = parts[parts.length - 1];
    if (parts.length !== (perNamespace ? 2 : 1) || (route !== "changes" && route !== "snapshot")) {
      send(res, 404, { error: "not_found", message: `no route ${url.pathname.slice(0, 200)}` });
      return;
    }
    let source: UpstreamSource | null;
    if (typeof options.source === "function") {
      let namespace: string;
      try {
        namespace = decodeURIComponent(parts[0]!);
      } catch {
        throw new UpstreamCallError(400, "bad_request", "the namespace is not valid percent-encoding");
      }
      // A source may map names to files or tables: only a namespace name reaches it.
      if (!isValidNamespace(namespace)) {
        throw new UpstreamCallError(400, "bad_request", "the namespace must match [A-Za-z0-9_-]{1,64}");
      }
      source = options.source(namespace);
    } else source = options.source;
    if (!source) {
      send(res, 404, { error: "not_found", message: `no upstream for ${url.pathname.slice(0, 200)}` });
      return;
    }
    const query = parseUpstreamQuery(route, url.searchParams);
    if (query.route === "changes") send(res, 200, await source.changes(query.watermark, query.limit));
    else send(res, 200, await source.snapshotPage(query.table, query.cursor, query.limit));
  };

  const httpServer = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (res.headersSent) return res.destroy();
      if (error instanceof UpstreamGoneError)
        send(res, 410, { error: "gone", oldest: error.oldest, message: error.message });
      else if (error instanceof UpstreamCallError)
        send(
          res,
          error.status,
          { error: error.code, message: error.message },
          error.retryAfterMs === undefined
            ? {}
            : { "retry-after": String(Math.max(0, Math.ceil(error.retryAfterMs / 1000))) },
        );
      else send(res, 500, { error: "internal", message: "internal error" });
    });
  });

  return { httpServer, ...listening(httpServer) };
}
