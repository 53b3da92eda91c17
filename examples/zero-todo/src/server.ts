import { loadStaticFiles, staticFilesHandler } from "@weir/example-todo/server/static-files";
import { serve } from "@weir/node-host";
import { zeroTodoConfig } from "./zero-config.js";

// The Zero todo app's server: weir's Node host with the Zero todo config (its SQLite file under
// WEIR_DATA_DIR, default .data), and the built browser app on the same origin. The port comes
// from PORT (default 4848); `serve` stops gracefully on SIGTERM and Ctrl-C.

const dataDir = process.env.WEIR_DATA_DIR || ".data";
const files = await loadStaticFiles(new URL("./public/", import.meta.url));
console.log(
  "weir: development authentication is on: the client's auth is the user id, unverified. Never use it in production.",
);
const server = await serve({
  ...zeroTodoConfig,
  storage: "file",
  dataDir,
  host: process.env.HOST || "127.0.0.1",
  onRequest: staticFilesHandler(files),
});
console.log(`zero todo app: open ${server.url}/ in two windows; the database is in ${dataDir}/`);
