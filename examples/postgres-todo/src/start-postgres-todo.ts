import { mkdirSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { join } from "node:path";
import { NAMESPACE, todoSchema } from "@weir/example-todo/schema";
import type { Logger } from "@weir/host-core";
import { createServer, type WeirServer } from "@weir/node-host";
import { type PostgresUpstream, postgresUpstream } from "@weir/postgres";
import pg from "pg";
import { type AppServer, startAppServer } from "./app-server.js";
import { checkUpstreamSchema } from "./check-upstream-schema.js";
import { requireLogicalWal } from "./require-logical-wal.js";
import { ensureTodoTable } from "./todo-table.js";

/** The `application_name` of the app server's connections to PostgreSQL. */
export const APP_CONNECTION_NAME = "postgres-todo-app";

export interface PostgresTodoOptions {
  /** The app's database; its server needs `wal_level=logical` (see the README). */
  databaseUrl: string;
  /** weir's namespace file and the change buffer (`upstream.sqlite`). */
  dataDir: string;
  host?: string;
  /** weir's port (what browsers use); 0 picks a free one. */
  port?: number;
  /** The app server's port (only weir calls it); 0 picks a free one. */
  appPort?: number;
  /** How often weir polls the buffer while sockets are open: a backstop, since commits notify it in process. */
  pollMs?: number;
  logger?: Logger;
  /**
   * The key of weir's admin routes (`x-admin-key`: status, `breaker/reopen`, `resnapshot`);
   * without one they are closed.
   */
  adminKey?: string;
  /** Routes answered before weir's (the page's files). */
  onRequest?(req: IncomingMessage, res: ServerResponse): boolean;
}

export interface PostgresTodo {
  /** weir's address: the page, `/todo/replicache/pull|push`, `/todo/wake`. */
  url: string;
  /** The app server's mutate endpoint. */
  appUrl: string;
  weir: WeirServer;
  upstream: PostgresUpstream;
  close(): Promise<void>;
}

/**
 * The todo app with PostgreSQL as the system of record, in one process: (1) the app server,
 * which writes PostgreSQL; (2) `@weir/postgres` following the database by logical replication
 * into a change buffer; (3) weir's Node host, whose `todo` namespace replicates that buffer and
 * forwards pushes to the app server. A push goes browser → weir → app server → PostgreSQL →
 * replication → buffer → weir, and is acknowledged once its rows are in weir.
 */
export async function startPostgresTodo(options: PostgresTodoOptions): Promise<PostgresTodo> {
  const host = options.host ?? "127.0.0.1";
  const pool = new pg.Pool({
    connectionString: options.databaseUrl,
    max: 8,
    application_name: APP_CONNECTION_NAME,
  });
  // An idle connection that PostgreSQL ends (a restart, an operator's pg_terminate_backend) is
  // dropped from the pool and the next query opens another: it must not crash the process.
  pool.on("error", (error) =>
    options.logger?.log("warn", { msg: "app database connection lost", error: error.message }),
  );
  const opened: Array<() => Promise<void>> = [() => pool.end()];
  const closeAll = async () => {
    for (const close of opened.splice(0).reverse()) await close().catch(() => {});
  };
  try {
    await requireLogicalWal(pool);
    await ensureTodoTable(pool);
    // The change buffer opens first, before weir would create the directory.
    mkdirSync(options.dataDir, { recursive: true });
    let weir: WeirServer | undefined;
    const upstream = await postgresUpstream({
      databaseUrl: options.databaseUrl,
      tables: ["todo"],
      bufferFile: join(options.dataDir, "upstream.sqlite"),
      // The table has no tenant column: every row reaches the one namespace, and weir's
      // visibility filter decides who sees it.
      namespaces: [NAMESPACE],
      // In-process notify: each commit to the buffer has the namespace ingest at once, which
      // wakes the browsers' sockets (no HTTP hop, no polling delay).
      onCommit: (namespaces) => weir?.host?.upstreamCommitted(namespaces),
    });
    opened.push(() => upstream.close());
    checkUpstreamSchema(upstream.schema, todoSchema);

    const app: AppServer = await startAppServer({ pool, host, port: options.appPort ?? 0 });
    opened.push(() => app.close());

    weir = createServer({
      schema: todoSchema,
      // Every write goes through the app server: weir runs no mutator of its own here.
      mutators: {},
      visibility: (claims) => ({ todo: { sql: "owner = ?", params: [claims.userID] } }),
      devAuth: true,
      storage: "file",
      dataDir: options.dataDir,
      authorizeNamespace: (_claims, namespace) => namespace === NAMESPACE,
      upstream: {
        source: (namespace) => (namespace === NAMESPACE ? upstream.source(namespace) : null),
        ...(options.pollMs === undefined ? {} : { pollMs: options.pollMs }),
      },
      mutate: { url: app.url },
      ...(options.adminKey ? { adminKey: options.adminKey } : {}),
      ...(options.logger ? { logger: options.logger } : {}),
      ...(options.onRequest ? { onRequest: options.onRequest } : {}),
    });
    const server = weir;
    const { url } = await server.listen({ host, port: options.port ?? 0 });
    // weir first, so that no push is in flight when the app server and the upstream go.
    opened.push(() => server.close());
    // The upstream streamed what PostgreSQL committed while weir was down before weir was there
    // to hear of it: the namespace's first pull or push ingests it first.
    server.host?.upstreamCommitted([NAMESPACE]);
    return { url: url.replace(/\/$/, ""), appUrl: app.url, weir: server, upstream, close: closeAll };
  } catch (error) {
    await closeAll();
    throw error;
  }
}
