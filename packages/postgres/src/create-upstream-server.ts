import { timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { parseUpstreamQuery } from "./parse-upstream-query.js";
import type { PostgresUpstream } from "./postgres-upstream.js";
import { UpstreamError } from "./upstream-error.js";
import { UpstreamGoneError } from "./upstream-gone-error.js";
import { encodeWatermark } from "./watermark.js";

export interface UpstreamServerOptions {
  upstream: PostgresUpstream;
  /** Every request must carry `Authorization: Bearer <token>` (none checked when absent). */
  token?: string;
}

export interface UpstreamServer {
  readonly httpServer: Server;
  /** Listens (port 0 picks a free one; host 127.0.0.1 unless given) and answers the URL. */
  listen(options?: { port?: number; host?: string }): Promise<{ url: string; port: number }>;
  /** Stops accepting and ends open connections; the upstream itself stays open. */
  close(): Promise<void>;
}

const JSON_HEADERS = { "content-type": "application/json", "cache-control": "no-store" };

function json(value: unknown): string {
  return JSON.stringify(value, (_key, v) => (typeof v === "bigint" ? encodeWatermark(v) : v));
}

function send(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { ...JSON_HEADERS, ...headers });
  res.end(json(body));
}

function authorized(req: IncomingMessage, token: string | undefined): boolean {
  if (token === undefined) return true;
  const header = req.headers.authorization ?? "";
  const given = Buffer.from(header.startsWith("Bearer ") ? header.slice(7) : "");
  const expected = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/**
 * weir's upstream contract over `node:http`: `GET /<namespace>/changes`, `GET /<namespace>/snapshot`,
 * plus `GET /status` and `GET /metrics` for operators. Every error is JSON `{ error, message }`
 * (410 adds `oldest`); bad input is a 4xx and changes nothing.
 */
export function createUpstreamServer(options: UpstreamServerOptions): UpstreamServer {
  const { upstream, token } = options;

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? "/", "http://upstream.invalid");
    if (!authorized(req, token)) {
      send(
        res,
        401,
        { error: "unauthorized", message: "a valid bearer token is required" },
        {
          "www-authenticate": "Bearer",
        },
      );
      return;
    }
    const parts = url.pathname.split("/").slice(1);
    if (req.method !== "GET" && req.method !== "HEAD") {
      send(
        res,
        405,
        { error: "method_not_allowed", message: `${req.method} is not allowed here` },
        { allow: "GET" },
      );
      return;
    }
    if (parts.length === 1 && parts[0] === "status") {
      send(res, 200, await upstream.status());
      return;
    }
    if (parts.length === 1 && parts[0] === "metrics") {
      res.writeHead(200, { "content-type": upstream.metrics.contentType });
      res.end(await upstream.metrics.metrics());
      return;
    }
    if (parts.length !== 2 || (parts[1] !== "changes" && parts[1] !== "snapshot")) {
      send(res, 404, { error: "not_found", message: `no route ${url.pathname}` });
      return;
    }
    let namespace: string;
    try {
      namespace = decodeURIComponent(parts[0]!);
    } catch {
      throw new UpstreamError(400, "bad_request", "the namespace is not valid percent-encoding");
    }
    const source = upstream.source(namespace);
    const query = parseUpstreamQuery(parts[1] as "changes" | "snapshot", url.searchParams);
    if (query.route === "changes") {
      send(res, 200, await source.changes(query.watermark, query.limit));
    } else {
      send(res, 200, await source.snapshotPage(query.table, query.cursor, query.limit));
    }
  };

  const httpServer = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (error instanceof UpstreamGoneError) {
        send(res, 410, { error: "gone", oldest: error.oldest, message: error.message });
      } else if (error instanceof UpstreamError) {
        send(res, error.status, { error: error.code, message: error.message });
      } else {
        send(res, 500, { error: "internal", message: (error as Error).message });
      }
    });
  });

  return {
    httpServer,
    listen({ port = 0, host = "127.0.0.1" } = {}) {
      return new Promise((resolve, reject) => {
        httpServer.once("error", reject);
        httpServer.listen(port, host, () => {
          httpServer.off("error", reject);
          const bound = (httpServer.address() as { port: number }).port;
          resolve({ url: `http://${host.includes(":") ? `[${host}]` : host}:${bound}`, port: bound });
        });
      });
    },
    close() {
      return new Promise((resolve) => {
        httpServer.close(() => resolve());
        httpServer.closeAllConnections();
      });
    },
  };
}
