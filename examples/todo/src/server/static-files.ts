import { readdir, readFile } from "node:fs/promises";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { extname } from "node:path";

const CONTENT_TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".map": "application/json; charset=utf-8",
  ".txt": "text/plain; charset=utf-8",
  ".svg": "image/svg+xml",
  ".ico": "image/x-icon",
};

interface StaticFile {
  body: Buffer;
  type: string;
}

/**
 * Loads a directory of built files (the page, its script and stylesheet) into memory. Only
 * these exact names are ever served, so no request path reaches the file system.
 */
export async function loadStaticFiles(dir: URL): Promise<Map<string, StaticFile>> {
  const files = new Map<string, StaticFile>();
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const type = CONTENT_TYPES[extname(entry.name)];
    if (!entry.isFile() || !type) continue;
    files.set(`/${entry.name}`, { body: await readFile(new URL(entry.name, dir)), type });
  }
  const index = files.get("/index.html");
  if (index) files.set("/", index);
  return files;
}

/**
 * Puts the static files in front of the server's request handler: a GET or HEAD of one of
 * them is answered here, every other request goes on to weir. Call before `listen`.
 */
export function serveStaticFiles(server: Server, files: Map<string, StaticFile>): void {
  const next = server.listeners("request") as Array<(req: IncomingMessage, res: ServerResponse) => void>;
  server.removeAllListeners("request");
  server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    const file = (req.method === "GET" || req.method === "HEAD") && files.get(pathOf(req.url));
    if (!file) {
      for (const handler of next) handler.call(server, req, res);
      return;
    }
    res.writeHead(200, {
      "content-type": file.type,
      "content-length": file.body.length,
      // Rebuilt on every build: always revalidate rather than run a stale bundle.
      "cache-control": "no-cache",
      "x-content-type-options": "nosniff",
    });
    res.end(req.method === "HEAD" ? undefined : file.body);
  });
}

function pathOf(url: string | undefined): string {
  const end = url?.search(/[?#]/) ?? -1;
  return (end >= 0 ? url?.slice(0, end) : url) ?? "";
}
