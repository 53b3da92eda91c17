import { type IncomingHttpHeaders, type IncomingMessage, type ServerResponse, STATUS_CODES } from "node:http";
import type { Duplex } from "node:stream";
import { jsonParts, type RequestParts, type ResponseParts } from "@weir/host-core";

/** A request body as read: `overflow` when it went past the limit and reading stopped. */
export interface ReadBody {
  bytes: Buffer | null;
  overflow: boolean;
}

/**
 * Reads at most `limit + 1` bytes, so host-core sees that the body is too large (413) without
 * the server buffering what a client chose to send. A declared length past the limit is not read.
 */
export function readBody(req: IncomingMessage, limit: number): Promise<ReadBody> {
  if (req.method === "GET" || req.method === "HEAD") return Promise.resolve({ bytes: null, overflow: false });
  const declared = Number(req.headers["content-length"]);
  if (Number.isFinite(declared) && declared > limit) return Promise.resolve({ bytes: null, overflow: true });
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    const onData = (chunk: Buffer) => {
      total += chunk.length;
      chunks.push(chunk);
      if (total > limit) {
        req.off("data", onData);
        req.pause();
        resolve({ bytes: Buffer.concat(chunks), overflow: true });
      }
    };
    req.on("data", onData);
    req.on("end", () =>
      resolve({ bytes: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks), overflow: false }),
    );
    req.on("error", reject);
  });
}

function toHeaders(incoming: IncomingHttpHeaders): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(incoming)) {
    if (value === undefined) continue;
    headers.set(name, Array.isArray(value) ? value.join(", ") : value);
  }
  return headers;
}

/**
 * A request's headers as a read-only standard `Headers`, read straight from Node's parsed
 * object: most requests look up two or three of them, which then costs no copy. (Node has
 * already refused names and values a `Headers` would.)
 */
export class IncomingHeaders {
  #incoming: IncomingHttpHeaders;
  #sorted: [string, string][] | undefined;

  constructor(incoming: IncomingHttpHeaders) {
    this.#incoming = incoming;
  }

  get(name: string): string | null {
    const value = this.#incoming[name.toLowerCase()];
    if (value === undefined) return null;
    return Array.isArray(value) ? value.join(", ") : value;
  }

  has(name: string): boolean {
    return this.#incoming[name.toLowerCase()] !== undefined;
  }

  getSetCookie(): string[] {
    return this.#incoming["set-cookie"] ?? [];
  }

  forEach(callback: (value: string, name: string, parent: Headers) => void, thisArg?: unknown): void {
    for (const [name, value] of this.entries())
      callback.call(thisArg, value, name, this as unknown as Headers);
  }

  entries(): IterableIterator<[string, string]> {
    this.#sorted ??= [...toHeaders(this.#incoming)];
    return this.#sorted[Symbol.iterator]();
  }

  keys(): IterableIterator<string> {
    return [...this.entries()].map(([name]) => name)[Symbol.iterator]();
  }

  values(): IterableIterator<string> {
    return [...this.entries()].map(([, value]) => value)[Symbol.iterator]();
  }

  [Symbol.iterator](): IterableIterator<[string, string]> {
    return this.entries();
  }

  append(): void {
    throw new TypeError("a request's headers are immutable");
  }

  set(): void {
    throw new TypeError("a request's headers are immutable");
  }

  delete(): void {
    throw new TypeError("a request's headers are immutable");
  }
}

/**
 * The parts of a Node request for host-core; null when its target is not a path. The standard
 * Request is built only if host-core asks for one (a wake upgrade).
 */
export function toParts(req: IncomingMessage, body: Buffer | null): RequestParts | null {
  // Any target that starts with "/" makes a valid URL after an origin (Node's parser has
  // already refused control characters).
  if (!req.url?.startsWith("/")) return null;
  const url = `http://localhost${req.url}`;
  const headers = new IncomingHeaders(req.headers) as unknown as Headers;
  const method = req.method ?? "GET";
  const hasBody = body !== null && method !== "GET" && method !== "HEAD";
  let request: Request | undefined;
  return {
    method,
    url,
    headers,
    body: hasBody ? body : null,
    request() {
      request ??= new Request(url, {
        method,
        headers: toHeaders(req.headers),
        body: hasBody ? (body as Uint8Array<ArrayBuffer>) : null,
      });
      return request;
    },
  };
}

/** Writes host-core's answer; a dropped one breaks the connection instead. */
/** An answer to write: host-core's, or a worker's, whose large body comes as bytes. */
export type AnswerParts = Omit<ResponseParts, "body"> & { body: string | Uint8Array | null };

export function writeParts(res: ServerResponse, answer: AnswerParts, close: boolean): void {
  // A wake upgrade goes through the server's upgrade event; a plain request cannot be one.
  const parts = answer.upgrade
    ? jsonParts(
        { error: "bad_request", message: "this route is a WebSocket: send `Upgrade: websocket`" },
        400,
      )
    : answer;
  if (parts.drop) {
    res.destroy();
    return;
  }
  // With its length known the answer goes out in one write, not as chunks.
  const length = parts.body === null || parts.body === undefined ? 0 : Buffer.byteLength(parts.body);
  const headers: string[] = [];
  for (const name in parts.headers) headers.push(name, parts.headers[name]!);
  headers.push("content-length", String(length));
  if (close) headers.push("connection", "close");
  res.writeHead(parts.status, headers);
  res.end(parts.body ?? undefined);
}

/**
 * Answers on a bare socket, where Node's HTTP layer does not (a request it could not parse, a
 * refused upgrade), then closes the connection.
 */
export function writeRawAnswer(
  socket: Duplex,
  status: number,
  body: string | Uint8Array,
  headers: Record<string, string> = {},
): void {
  const head = [
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ""}`,
    "content-type: application/json; charset=utf-8",
    `content-length: ${Buffer.byteLength(body)}`,
    "connection: close",
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
  ];
  if (typeof body === "string") socket.end(`${head.join("\r\n")}\r\n\r\n${body}`);
  else {
    socket.write(`${head.join("\r\n")}\r\n\r\n`);
    socket.end(body);
  }
}

/**
 * A request Node's parser refused (a control character in a header, a malformed line, headers
 * too large) gets the JSON error shape too, rather than Node's bare 400.
 */
export function answerClientError(error: Error & { code?: string }, socket: Duplex): void {
  if (!socket.writable || error.code === "ECONNRESET") {
    socket.destroy();
    return;
  }
  const problem =
    error.code === "HPE_HEADER_OVERFLOW"
      ? "its headers are too large"
      : error.code === "ERR_HTTP_REQUEST_TIMEOUT"
        ? "it did not arrive in time"
        : `it is not well-formed HTTP (${error.code ?? "parse error"})`;
  writeRawAnswer(
    socket,
    400,
    JSON.stringify({ error: "bad_request", message: `the request was refused: ${problem}` }),
  );
}
