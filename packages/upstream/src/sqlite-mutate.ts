import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import {
  encodeWatermark,
  type MutateRequest,
  MutateRequest as MutateRequestSchema,
  type MutateResponse,
  parse,
} from "@weir/protocol";
import type Database from "better-sqlite3";
import type { SqliteUpstream } from "./sqlite-upstream.js";

/** What a mutator knows of the mutation it applies. */
export interface MutationContext {
  namespace: string;
  clientGroupID: string;
  clientID: string;
  mutationID: number;
  /** The client's Authorization, as weir passed it on. */
  authorization: string | null;
}

/** Applies one mutation to the app's database; a throw is an application error (its writes roll back). */
export type SqliteMutator = (db: Database.Database, args: unknown, context: MutationContext) => void;

/** Where the app keeps each client's last applied mutation id, beside its own tables (not synced). */
export const APP_CLIENTS_TABLE = "_weir_app_clients";

/**
 * Applies a delegated push to an app's SQLite database, the app's side of delegated push. Each
 * mutation runs in a transaction of its own with the client's last mutation id, so a push weir
 * sends again (after a timeout, a crash) applies nothing twice; a mutator that throws has its
 * writes rolled back, its id recorded and its message answered. The answer carries the watermark
 * the writes were published at.
 */
export function applyMutations(
  upstream: SqliteUpstream,
  mutators: Readonly<Record<string, SqliteMutator>>,
  request: MutateRequest,
  context: { namespace: string; authorization: string | null },
): MutateResponse {
  const db = upstream.db;
  db.exec(
    `CREATE TABLE IF NOT EXISTS ${APP_CLIENTS_TABLE} (client_group_id TEXT NOT NULL, client_id TEXT NOT NULL, last_mutation_id INTEGER NOT NULL, PRIMARY KEY (client_group_id, client_id)) WITHOUT ROWID`,
  );
  const read = db.prepare(
    `SELECT last_mutation_id FROM ${APP_CLIENTS_TABLE} WHERE client_group_id = ? AND client_id = ?`,
  );
  const write = db.prepare(
    `INSERT INTO ${APP_CLIENTS_TABLE} (client_group_id, client_id, last_mutation_id) VALUES (?, ?, ?) ON CONFLICT (client_group_id, client_id) DO UPDATE SET last_mutation_id = excluded.last_mutation_id`,
  );
  const results: MutateResponse["mutations"] = [];
  for (const mutation of request.mutations) {
    const ref = { clientID: mutation.clientID, id: mutation.id };
    const outcome = db.transaction(() => {
      const row = read.get(request.clientGroupID, mutation.clientID) as
        | { last_mutation_id: bigint }
        | undefined;
      const last = Number(row?.last_mutation_id ?? 0n);
      // Applied already (weir sent it again): acknowledge without applying.
      if (mutation.id <= last) return {};
      if (mutation.id > last + 1)
        throw new Error(`mutation ${mutation.id} of ${mutation.clientID} is out of order`);
      let result: MutateResponse["mutations"][number]["result"] = {};
      const mutator = mutators[mutation.name];
      try {
        if (!mutator) throw new Error(`no mutator ${mutation.name}`);
        db.transaction(() =>
          mutator(db, mutation.args[0], {
            namespace: context.namespace,
            clientGroupID: request.clientGroupID,
            clientID: mutation.clientID,
            mutationID: mutation.id,
            authorization: context.authorization,
          }),
        )();
      } catch (error) {
        result = { error: "app", message: (error as Error).message };
      }
      write.run(request.clientGroupID, mutation.clientID, mutation.id);
      return result;
    })();
    results.push({ id: ref, result: outcome });
  }
  return { mutations: results, watermark: upstream.publish() };
}

export interface MutateServerOptions {
  /** The app's database of a namespace (from `x-weir-namespace`); null answers 404. */
  upstream: (namespace: string) => SqliteUpstream | null;
  mutators: Readonly<Record<string, SqliteMutator>>;
  /** Checks the caller (weir passes the client's Authorization on); false answers 403. */
  authorize?(authorization: string | null, namespace: string): boolean;
}

export interface MutateServer {
  readonly httpServer: Server;
  /** Listens (port 0 picks one) and answers the mutate endpoint's URL. */
  listen(options?: { port?: number; host?: string }): Promise<{ url: string }>;
  close(): Promise<void>;
}

const JSON_HEADERS = { "content-type": "application/json" };

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, JSON_HEADERS);
  res.end(
    JSON.stringify(body, (_key, value) => (typeof value === "bigint" ? encodeWatermark(value) : value)),
  );
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/** The app's mutate endpoint over `node:http`: `POST /mutate`, for tests and demos. */
export function createMutateServer(options: MutateServerOptions): MutateServer {
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://app.invalid");
    if (url.pathname !== "/mutate") return send(res, 404, { error: "not_found", message: "POST /mutate" });
    if (req.method !== "POST")
      return send(res, 405, { error: "method_not_allowed", message: "POST /mutate" });
    const namespace = String(req.headers["x-weir-namespace"] ?? "");
    const authorization = req.headers.authorization ?? null;
    const upstream = options.upstream(namespace);
    if (!upstream) return send(res, 404, { error: "not_found", message: `no app database for ${namespace}` });
    if (options.authorize && !options.authorize(authorization, namespace)) {
      return send(res, 403, { error: "forbidden", message: "not allowed" });
    }
    let json: unknown;
    try {
      json = JSON.parse(await readBody(req));
    } catch {
      return send(res, 400, { error: "bad_request", message: "the body is not JSON" });
    }
    const request = parse(MutateRequestSchema, json);
    if (!request.ok) return send(res, 400, { error: "bad_request", message: request.message });
    send(res, 200, applyMutations(upstream, options.mutators, request.value, { namespace, authorization }));
  };
  const httpServer = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (res.headersSent) return res.destroy();
      send(res, 500, { error: "internal", message: (error as Error).message });
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
          resolve({ url: `http://${host}:${bound}/mutate` });
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
