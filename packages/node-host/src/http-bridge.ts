import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http";

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

export function toHeaders(incoming: IncomingHttpHeaders): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(incoming)) {
    if (value === undefined) continue;
    headers.set(name, Array.isArray(value) ? value.join(", ") : value);
  }
  return headers;
}

/** The standard Request for a Node request; null when its target is not a path. */
export function toRequest(req: IncomingMessage, body: Buffer | null): Request | null {
  if (!req.url?.startsWith("/")) return null;
  let url: URL;
  try {
    url = new URL(`http://localhost${req.url}`);
  } catch {
    return null;
  }
  const method = req.method ?? "GET";
  return new Request(url, {
    method,
    headers: toHeaders(req.headers),
    body: body && method !== "GET" && method !== "HEAD" ? (body as Uint8Array<ArrayBuffer>) : null,
  });
}

/**
 * Writes a standard Response. The body is read in full before the status goes out, so a body that
 * fails (a dropped push response) destroys the connection and the client sees no answer at all.
 */
export async function writeResponse(res: ServerResponse, response: Response, close: boolean): Promise<void> {
  let body: Buffer | null = null;
  if (response.body) {
    try {
      body = Buffer.from(await response.arrayBuffer());
    } catch {
      res.destroy();
      return;
    }
  }
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  if (close) headers.connection = "close";
  res.writeHead(response.status, headers);
  res.end(body);
}
