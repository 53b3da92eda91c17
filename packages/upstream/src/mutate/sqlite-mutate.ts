import { createServer, type Server } from "node:http";
import type { MutateAnswer, MutateRequest } from "@weir/protocol";
import type Database from "better-sqlite3";
import { listening } from "../listening.js";
import type { SqliteUpstream } from "../sqlite-upstream.js";
import { createMutateEndpoint } from "./mutate-endpoint.js";
import type { MutateLedger, MutationContext, MutationOutcome } from "./mutate-ledger.js";
import { mutatorNamed, processMutations } from "./process-mutations.js";

/** Applies one mutation to the app's database; a throw is an application error (its writes roll back). */
export type SqliteMutator = (db: Database.Database, args: unknown, context: MutationContext) => void;

/** Where the app keeps each client's last applied mutation id, beside its own tables (not synced). */
export const APP_CLIENTS_TABLE = "_weir_app_clients";

/** The clients' ledger in the app's SQLite file: each mutation in a transaction with its id. */
function sqliteLedger(
  upstream: SqliteUpstream,
  mutators: Readonly<Record<string, SqliteMutator>>,
): MutateLedger {
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
  return {
    apply: (mutation, context) =>
      db.transaction((): MutationOutcome => {
        const row = read.get(context.clientGroupID, mutation.clientID) as
          | { last_mutation_id: number | bigint }
          | undefined;
        const last = Number(row?.last_mutation_id ?? 0);
        // Applied already (weir sent it again): acknowledged without applying.
        if (mutation.id <= last) return { kind: "applied", result: {} };
        if (mutation.id > last + 1) return { kind: "ooo" };
        let result: MutationOutcome & { kind: "applied" } = { kind: "applied", result: {} };
        const mutator = mutatorNamed(mutators, mutation.name);
        try {
          if (!mutator) throw new Error(`no mutator ${mutation.name}`);
          db.transaction(() => mutator(db, mutation.args[0], context))();
        } catch (error) {
          result = { kind: "applied", result: { error: "app", message: (error as Error).message } };
        }
        write.run(context.clientGroupID, mutation.clientID, mutation.id);
        return result;
      })(),
    watermark: () => upstream.publish(),
  };
}

/**
 * Applies a delegated push to an app's SQLite database, the app's side of delegated push. Each
 * mutation runs in a transaction of its own with the client's last mutation id, so a push weir
 * sends again (after a timeout, a crash) applies nothing twice; a mutator that throws has its
 * writes rolled back, its id recorded and its message answered. The answer carries the watermark
 * the writes were published at, or refuses the push (`PushFailed oooMutation`) from a mutation
 * beyond the next one the app expects.
 */
export function applyMutations(
  upstream: SqliteUpstream,
  mutators: Readonly<Record<string, SqliteMutator>>,
  request: MutateRequest,
  context: { namespace: string; authorization: string | null },
): Promise<MutateAnswer> {
  return processMutations(sqliteLedger(upstream, mutators), request, context);
}

export interface MutateServerOptions {
  /** The app's database of a namespace (from `x-weir-namespace`); null answers 404. */
  upstream: (namespace: string) => SqliteUpstream | null;
  mutators: Readonly<Record<string, SqliteMutator>>;
  /** Checks the caller (weir passes the client's Authorization on); false answers 403. */
  authorize?(authorization: string | null, namespace: string): boolean;
  /** The largest body read, in bytes (default 4 MiB). */
  maxBodyBytes?: number;
}

export interface MutateServer {
  readonly httpServer: Server;
  /** Listens (port 0 picks one) and answers the mutate endpoint's URL. */
  listen(options?: { port?: number; host?: string }): Promise<{ url: string }>;
  close(): Promise<void>;
}

/** The app's mutate endpoint over `node:http`: `POST /mutate`, for tests and demos. */
export function createMutateServer(options: MutateServerOptions): MutateServer {
  const endpoint = createMutateEndpoint({
    knows: (namespace) => options.upstream(namespace) !== null,
    authorize: options.authorize,
    maxBodyBytes: options.maxBodyBytes,
    process: (request, context) => {
      const upstream = options.upstream(context.namespace);
      if (!upstream) throw new Error(`no app database for ${context.namespace}`);
      return applyMutations(upstream, options.mutators, request, context);
    },
  });
  const httpServer = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://app.invalid");
    if (url.pathname !== "/mutate") {
      res.writeHead(404, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: "not_found", message: "POST /mutate" }));
      return;
    }
    endpoint.handleNode(req, res).catch(() => res.destroy());
  });
  const server = listening(httpServer);
  return {
    httpServer,
    async listen(at) {
      const { url } = await server.listen(at);
      return { url: `${url}/mutate` };
    },
    close: server.close,
  };
}
