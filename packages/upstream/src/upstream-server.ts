import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { UpstreamCallError, UpstreamGoneError, type UpstreamSource } from "@weir/host-core";
import { UpstreamCursorError, UpstreamTableError } from "./sqlite-upstream.js";
import { watermarkJson } from "./watermark-json.js";

export interface UpstreamServerOptions {
  /** One source at the root (`/changes`), or one per namespace (`/<namespace>/changes`). */
  source: UpstreamSource | ((namespace: string) => UpstreamSource | null);
  /** Requests must carry `Authorization: Bearer <token>` when set. */
  token?: string;
  /** Default 1,000; at most 10,000. */
  defaultLimit?: number;
}

export interface UpstreamServer {
  readonly httpServer: Server;
  listen(options?: { port?: number; host?: string }): Promise<{ url: string; port: number }>;
  close(): Promise<void>;
}

const MAX_LIMIT = 10_000;
const WATERMARK = /^(0|[1-9][0-9]{0,19})$/;

class BadRequest extends Error {}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = typeof body === "string" ? body : JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(text),
  });
  res.end(text);
}

function limitParam(url: URL, fallback: number): number {
  const text = url.searchParams.get("limit");
  if (text === null) return fallback;
  const limit = Number(text);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT)
    throw new BadRequest(`limit must be 1 to ${MAX_LIMIT}`);
  return limit;
}

/**
 * Serves the upstream contract (`GET /changes`, `GET /snapshot`) for a source, over node:http:
 * watermarks as JSON numbers while safe and decimal strings beyond, 410 for a watermark older
 * than what the source keeps, JSON errors for bad requests.
 */
export function createUpstreamServer(options: UpstreamServerOptions): UpstreamServer {
  const defaultLimit = options.defaultLimit ?? 1_000;
  const sourceFor = (segments: string[]): UpstreamSource | null => {
    if (typeof options.source !== "function") return segments.length === 1 ? options.source : null;
    return segments.length === 2 ? options.source(decodeURIComponent(segments[0]!)) : null;
  };

  const answer = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://upstream");
    if (options.token !== undefined && req.headers.authorization !== `Bearer ${options.token}`) {
      send(res, 401, { error: "unauthorized", message: "a bearer token is required" });
      return;
    }
    if (req.method !== "GET") {
      send(res, 405, { error: "method_not_allowed", message: "use GET" });
      return;
    }
    const segments = url.pathname.split("/").filter(Boolean);
    const route = segments[segments.length - 1];
    const source = sourceFor(segments);
    if (!source || (route !== "changes" && route !== "snapshot")) {
      send(res, 404, { error: "not_found", message: `no route for ${url.pathname.slice(0, 200)}` });
      return;
    }
    try {
      if (route === "changes") {
        const watermark = url.searchParams.get("watermark") ?? "";
        if (!WATERMARK.test(watermark)) throw new BadRequest("watermark must be a non-negative integer");
        const page = await source.changes(BigInt(watermark), limitParam(url, defaultLimit));
        send(res, 200, { watermark: watermarkJson(page.watermark), changes: page.changes });
      } else {
        const table = url.searchParams.get("table");
        if (!table) throw new BadRequest("table is required");
        const page = await source.snapshotPage(
          table,
          url.searchParams.get("cursor"),
          limitParam(url, defaultLimit),
        );
        send(res, 200, {
          watermark: watermarkJson(page.watermark),
          rows: page.rows,
          nextCursor: page.nextCursor,
        });
      }
    } catch (error) {
      if (error instanceof UpstreamGoneError)
        send(res, 410, { error: "gone", oldest: watermarkJson(error.oldest) });
      else if (error instanceof BadRequest || error instanceof UpstreamCursorError)
        send(res, 400, { error: "bad_request", message: error.message });
      else if (error instanceof UpstreamTableError)
        send(res, 404, { error: "not_found", message: error.message });
      else if (error instanceof UpstreamCallError)
        send(res, error.status, { error: "upstream", message: error.message });
      else send(res, 500, { error: "internal", message: "internal error" });
    }
  };

  const httpServer = createServer((req, res) => {
    answer(req, res).catch(() => {
      if (!res.headersSent) send(res, 500, { error: "internal", message: "internal error" });
    });
  });
  return {
    httpServer,
    listen: ({ port = 0, host = "127.0.0.1" } = {}) =>
      new Promise((resolve, reject) => {
        httpServer.once("error", reject);
        httpServer.listen(port, host, () => {
          const address = httpServer.address() as AddressInfo;
          resolve({
            url: `http://${host.includes(":") ? `[${host}]` : host}:${address.port}`,
            port: address.port,
          });
        });
      }),
    close: () =>
      new Promise((resolve) => {
        httpServer.close(() => resolve());
        httpServer.closeAllConnections();
      }),
  };
}
