import { readdir, readFile } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
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
 * Answers a GET or HEAD of one of the files, for node-host's `onRequest`: true when it
 * answered, false to let weir handle the request.
 */
export function staticFilesHandler(files: Map<string, StaticFile>) {
  return (req: IncomingMessage, res: ServerResponse): boolean => {
    const file = (req.method === "GET" || req.method === "HEAD") && files.get(pathOf(req.url));
    if (!file) return false;
    res.writeHead(200, {
      "content-type": file.type,
      "content-length": file.body.length,
      // Rebuilt on every build: always revalidate rather than run a stale bundle.
      "cache-control": "no-cache",
      "x-content-type-options": "nosniff",
    });
    res.end(req.method === "HEAD" ? undefined : file.body);
    return true;
  };
}

function pathOf(url: string | undefined): string {
  const end = url?.search(/[?#]/) ?? -1;
  return (end >= 0 ? url?.slice(0, end) : url) ?? "";
}
