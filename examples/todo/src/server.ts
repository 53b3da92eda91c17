import { createServer } from "@weir/node-host";
import { loadStaticFiles, serveStaticFiles } from "./server/static-files.js";
import { todoConfig } from "./todo-config.js";

// The todo app's server: weir's Node host with the todo config, its SQLite file under
// WEIR_DATA_DIR (default .data), and the built browser app on the same origin.

const port = Number(process.env.PORT ?? 4848);
if (!Number.isInteger(port) || port < 0 || port > 65_535) {
  console.error(`PORT must be a port number (0 to 65535), not ${JSON.stringify(process.env.PORT)}`);
  process.exit(2);
}
const host = process.env.HOST || "127.0.0.1";
const dataDir = process.env.WEIR_DATA_DIR || ".data";

const server = createServer({ ...todoConfig, storage: "file", dataDir });
serveStaticFiles(server.httpServer, await loadStaticFiles(new URL("./public/", import.meta.url)));
console.log(
  "weir: development authentication is on: the Authorization header is the user id, unverified. Never use it in production.",
);
const { url } = await server.listen({ port, host });
console.log(`weir listening on ${url}`);
console.log(`todo app: open ${url}/ in two windows; the database is in ${dataDir}/`);

// Stop accepting, finish the requests in flight, close the database, then exit.
const shutdown = (signal: NodeJS.Signals) => {
  process.off("SIGTERM", shutdown);
  process.off("SIGINT", shutdown);
  console.log(`weir: ${signal} received, shutting down`);
  server.close().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error("weir: shutdown failed", error);
      process.exit(1);
    },
  );
};
process.on("SIGTERM", shutdown);
process.on("SIGINT", shutdown);
