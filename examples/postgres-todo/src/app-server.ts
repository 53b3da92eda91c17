import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { NAMESPACE } from "@weir/example-todo/schema";
import { createPushProcessor } from "@weir/postgres";
import type pg from "pg";
import { sqlMutators } from "./sql-mutators.js";
import { userOf } from "./user-of.js";

export interface AppServer {
  /** The mutate endpoint weir forwards pushes to. */
  url: string;
  close(): Promise<void>;
}

/**
 * The app's own server: the one place that writes PostgreSQL. weir forwards each push's new
 * mutations to `POST /mutate`; the push processor runs each in a transaction of its own with the
 * client's last mutation id (so a push weir sends again applies nothing twice) and answers the
 * WAL position weir waits for before it acknowledges the push. It listens on loopback: only weir
 * calls it.
 */
export async function startAppServer(options: {
  pool: pg.Pool;
  host: string;
  port: number;
}): Promise<AppServer> {
  const processor = createPushProcessor({
    pool: options.pool,
    mutators: sqlMutators,
    // A careful app checks who is writing where, whoever passed the request on.
    authorize: (authorization, namespace) => namespace === NAMESPACE && userOf(authorization) !== null,
  });
  const server = createServer((req, res) => {
    if (new URL(req.url ?? "/", "http://app").pathname === "/mutate") {
      void processor.handleNode(req, res);
      return;
    }
    res.writeHead(404, { "content-type": "application/json" });
    res.end(JSON.stringify({ error: "not_found", message: "the app server answers POST /mutate" }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${options.host}:${port}/mutate`,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
