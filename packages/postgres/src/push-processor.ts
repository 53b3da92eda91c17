import {
  encodeWatermark,
  type MutateRequest,
  MutateRequest as MutateRequestSchema,
  type MutateResponse,
  type PushFailed,
  parse,
} from "@weir/protocol";
import type pg from "pg";
import { parseLsn } from "./lsn.js";
import { quoteIdentifier } from "./quote-identifier.js";

/** What a mutator knows of the mutation it runs. */
export interface PushContext {
  namespace: string;
  clientGroupID: string;
  clientID: string;
  mutationID: number;
  /** The client's `Authorization`, as weir passed it on. */
  authorization: string | null;
}

/**
 * Runs one mutation on the app's PostgreSQL, inside the transaction that also records the
 * client's last mutation id. A throw is an application error: the mutation's writes roll back,
 * its id is still recorded, and its message goes back to the client.
 */
export type PostgresMutator = (tx: pg.PoolClient, args: unknown, context: PushContext) => Promise<void>;

export interface PushProcessorOptions {
  /** Where the app's tables are (the database weir's `@weir/postgres` upstream follows). */
  pool: pg.Pool;
  mutators: Readonly<Record<string, PostgresMutator>>;
  /** Checks the caller weir passes on; false answers 403. Every caller is allowed without it. */
  authorize?(authorization: string | null, namespace: string): boolean | Promise<boolean>;
  /** The table of each client's last mutation id (default `weir_app_clients`, created when absent). */
  clientsTable?: string;
  /**
   * Whether a mutation's commit waits for its WAL to reach the disk (default false). weir
   * acknowledges a mutation only once its effects came back through logical replication, and
   * PostgreSQL decodes WAL only once it is flushed, so an acknowledged mutation is durable
   * either way: a crash before the flush loses a mutation no client was told of, together with
   * its client's last mutation id, and the client's push applies it once when sent again. Not
   * waiting lets many mutations share one flush. Set true when something else reads the app's
   * answers as durable.
   */
  synchronousCommit?: boolean;
  /** Called after a mutation's transaction committed (for logs and tests). */
  onCommitted?(context: PushContext): void;
}

/** The answer the mutate endpoint gives, with its HTTP status. */
export interface PushProcessorAnswer {
  status: number;
  body: unknown;
}

export interface PushProcessor {
  /** Runs a delegated push: each mutation in a transaction of its own, exactly once. */
  process(
    request: MutateRequest,
    context: { namespace: string; authorization: string | null },
  ): Promise<MutateResponse | { pushResponse: PushFailed }>;
  /** The mutate endpoint as a Fetch-API handler (`Request` in, `Response` out). */
  handleFetch(request: Request): Promise<Response>;
  /** The mutate endpoint for `node:http`: `(req, res) => void`. */
  handleNode(
    req: import("node:http").IncomingMessage,
    res: import("node:http").ServerResponse,
  ): Promise<void>;
}

/** Retried as a whole: another transaction won a race (serialization failure, deadlock). */
const RETRIED_SQLSTATES = new Set(["40001", "40P01"]);
const MAX_TX_ATTEMPTS = 5;
/**
 * The WAL position that every commit so far (this session's, and those whose row locks it waited
 * for) ends at or before. A commit with `synchronous_commit` on returns once its record is flushed,
 * so the flush position covers it, and the replication stream reaches it promptly: PostgreSQL
 * decodes WAL only once it is flushed, and records after a commit (a page pruned, a row locked by
 * a transaction still running) may wait long for a flush. With asynchronous commit the record may
 * not be flushed yet, so the insert position is the bound.
 */
const POSITION_QUERY_SYNC =
  "SELECT (CASE WHEN current_setting('synchronous_commit') = 'off' THEN pg_current_wal_insert_lsn() ELSE pg_current_wal_flush_lsn() END)::text AS lsn";
/** After a commit that waited for the local disk: the flush position bounds every commit before it. */
const POSITION_QUERY_FLUSHED = "SELECT pg_current_wal_flush_lsn()::text AS lsn";
/** With asynchronous commits (the processor's default): the insert position bounds them all. */
const POSITION_QUERY_ASYNC = "SELECT pg_current_wal_insert_lsn()::text AS lsn";
/** Largest mutate body read, as weir's own push limit. */
const MAX_BODY_BYTES = 16 * 1024 * 1024;

class RequestError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

type Outcome =
  | {
      kind: "applied";
      result: MutateResponse["mutations"][number]["result"];
      /** The WAL position read right after this mutation's commit, when asked for. */
      position: bigint | null;
    }
  | { kind: "ooo" };

/**
 * The app's side of delegated push on PostgreSQL. weir forwards the mutations that are next for
 * their clients; each runs in one transaction with the client's last mutation id (locked, then
 * advanced), so a push weir sends again after a timeout or a crash applies nothing twice. The
 * answer names every mutation and the WAL position after the last commit, which weir waits for
 * its upstream to reach before it acknowledges: the client sees the effects with the ack.
 */
export function createPushProcessor(options: PushProcessorOptions): PushProcessor {
  const table = quoteIdentifier(options.clientsTable ?? "weir_app_clients");
  const synchronous = options.synchronousCommit === true;
  const begin = synchronous ? "BEGIN" : "BEGIN; SET LOCAL synchronous_commit = off";
  // The push's last mutation commits waiting for the local disk (always: its flush carries the
  // push's earlier, asynchronous commits to the disk, which logical replication decodes only
  // then; left to the WAL writer, they would wait for its next round, up to `wal_writer_delay`).
  // Its flush position then covers every commit of the push.
  const beginLast = synchronous ? "BEGIN" : "BEGIN; SET LOCAL synchronous_commit = local";
  const lastPositionQuery = synchronous ? POSITION_QUERY_SYNC : POSITION_QUERY_FLUSHED;
  // Statements before the advance: its RETURNING row is in the result at this index.
  const advancedAt = synchronous ? 1 : 2;
  const positionQuery = synchronous ? POSITION_QUERY_SYNC : POSITION_QUERY_ASYNC;
  let created: Promise<void> | null = null;
  const ensureTable = () => {
    created ??= options.pool
      .query(
        `CREATE TABLE IF NOT EXISTS ${table} (client_group_id text NOT NULL, client_id text NOT NULL, last_mutation_id bigint NOT NULL, PRIMARY KEY (client_group_id, client_id))`,
      )
      .then(() => undefined)
      .catch((error: unknown) => {
        created = null;
        throw error;
      });
    return created;
  };

  /**
   * The statement that moves the client's last mutation id from `id - 1` to `id`, answering a row
   * only when it did: it locks the client's row, and a concurrent push of the same mutation waits
   * for this transaction and then finds the id moved. The first mutation of a client creates its
   * row. Literals, not parameters: it runs in a multi-statement query (escaped by `pg`; the id is
   * a safe integer).
   */
  function advance(client: pg.PoolClient, context: PushContext, id: number): string {
    const group = client.escapeLiteral(context.clientGroupID);
    const clientID = client.escapeLiteral(context.clientID);
    if (id === 1) {
      return `INSERT INTO ${table} AS c (client_group_id, client_id, last_mutation_id) VALUES (${group}, ${clientID}, 1) ON CONFLICT (client_group_id, client_id) DO UPDATE SET last_mutation_id = 1 WHERE c.last_mutation_id = 0 RETURNING 1`;
    }
    return `UPDATE ${table} SET last_mutation_id = ${id} WHERE client_group_id = ${group} AND client_id = ${clientID} AND last_mutation_id = ${id - 1} RETURNING 1`;
  }

  /**
   * One mutation in two round trips besides its mutator's queries: the transaction's start with
   * the client's id advanced (which locks its row), then the commit, which also reads the WAL
   * position after it when `readPosition` (the push's last mutation, whose position becomes the
   * answer's watermark). When the id did not advance, the mutation is a replay or out of order,
   * and nothing runs. A mutator that throws rolls the whole transaction back; its id is then
   * advanced in a transaction of its own, so the client's next mutation is taken.
   */
  async function applyOne(
    client: pg.PoolClient,
    mutation: MutateRequest["mutations"][number],
    context: PushContext,
    readPosition: boolean,
  ): Promise<Outcome> {
    const id = Math.trunc(mutation.id);
    const opening = readPosition ? beginLast : begin;
    const position = readPosition ? `; ${lastPositionQuery}` : "";
    // The position's SELECT follows a COMMIT, alone or after `begin` and the advance.
    const positionOf = (results: Array<pg.QueryResult<{ lsn: string }>>) =>
      readPosition ? parseLsn(results[results.length - 1]!.rows[0]!.lsn) : null;
    try {
      const opened = (await client.query(
        `${opening}; ${advance(client, context, id)}`,
      )) as unknown as Array<pg.QueryResult>;
      if (opened[advancedAt]!.rowCount === 0) {
        const stored = await client.query<{ last: string }>(
          `SELECT last_mutation_id::text AS last FROM ${table} WHERE client_group_id = $1 AND client_id = $2`,
          [context.clientGroupID, context.clientID],
        );
        await client.query("ROLLBACK");
        const last = stored.rows.length === 0 ? 0 : Number(stored.rows[0]!.last);
        // Applied already (weir sent it again): acknowledged, nothing applied.
        if (id <= last) return { kind: "applied", result: {}, position: null };
        return { kind: "ooo" };
      }
      const mutator = Object.hasOwn(options.mutators, mutation.name)
        ? options.mutators[mutation.name]
        : undefined;
      try {
        if (!mutator) throw new Error(`no mutator ${mutation.name}`);
        await mutator(client, mutation.args[0], context);
      } catch (error) {
        if (RETRIED_SQLSTATES.has((error as { code?: string }).code ?? "")) throw error;
        await client.query("ROLLBACK");
        // The refused mutation's id, recorded alone. Not advancing means another request took
        // this mutation meanwhile, which recorded it too.
        const recorded = (await client.query(
          `${opening}; ${advance(client, context, id)}; COMMIT${position}`,
        )) as unknown as Array<pg.QueryResult<{ lsn: string }>>;
        options.onCommitted?.(context);
        return {
          kind: "applied",
          result: { error: "app", message: (error as Error).message },
          position: positionOf(recorded),
        };
      }
      const closed = (await client.query(`COMMIT${position}`)) as unknown as
        | pg.QueryResult<{ lsn: string }>
        | Array<pg.QueryResult<{ lsn: string }>>;
      options.onCommitted?.(context);
      return {
        kind: "applied",
        result: {},
        position: Array.isArray(closed) ? positionOf(closed) : null,
      };
    } catch (error) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw error;
    }
  }

  async function process(
    request: MutateRequest,
    context: { namespace: string; authorization: string | null },
  ): Promise<MutateResponse | { pushResponse: PushFailed }> {
    await ensureTable();
    const client = await options.pool.connect();
    try {
      const mutations: MutateResponse["mutations"] = [];
      let position: bigint | null = null;
      for (const [index, mutation] of request.mutations.entries()) {
        const push: PushContext = {
          namespace: context.namespace,
          clientGroupID: request.clientGroupID,
          clientID: mutation.clientID,
          mutationID: mutation.id,
          authorization: context.authorization,
        };
        let outcome: Outcome | undefined;
        for (let attempt = 1; outcome === undefined; attempt++) {
          try {
            outcome = await applyOne(client, mutation, push, index === request.mutations.length - 1);
          } catch (error) {
            const code = (error as { code?: string }).code ?? "";
            if (!RETRIED_SQLSTATES.has(code) || attempt >= MAX_TX_ATTEMPTS) throw error;
          }
        }
        if (outcome.kind === "ooo") {
          // The app's record is behind what weir holds (a restored database): refuse the rest.
          return {
            pushResponse: {
              kind: "PushFailed",
              origin: "server",
              reason: "oooMutation",
              message: `mutation ${mutation.id} of client ${mutation.clientID} is not the next one this app expects`,
              mutationIDs: request.mutations.slice(index).map((m) => ({ clientID: m.clientID, id: m.id })),
            },
          };
        }
        mutations.push({ id: { clientID: mutation.clientID, id: mutation.id }, result: outcome.result });
        position = outcome.position;
      }
      // Every commit of the push starts before this position: weir's upstream has them all once
      // it is through the position less one (watermarks are commit LSNs). Read after the last
      // commit, or now when the last mutation was a replay (which another request may have
      // committed only while this one waited for its lock).
      if (position === null) {
        const now = await client.query<{ lsn: string }>(positionQuery);
        position = parseLsn(now.rows[0]!.lsn);
      }
      return { mutations, watermark: position - 1n };
    } finally {
      client.release();
    }
  }

  /** The endpoint's logic, whatever carries the request. */
  async function answer(
    method: string,
    headers: { get(name: string): string | null },
    readBody: () => Promise<string>,
  ): Promise<PushProcessorAnswer> {
    try {
      if (method !== "POST")
        throw new RequestError(405, "method_not_allowed", "the mutate endpoint takes POST");
      const namespace = headers.get("x-weir-namespace");
      if (!namespace) throw new RequestError(400, "bad_request", "x-weir-namespace names the namespace");
      const authorization = headers.get("authorization");
      if (options.authorize && !(await options.authorize(authorization, namespace))) {
        throw new RequestError(403, "forbidden", "this caller may not write here");
      }
      let json: unknown;
      try {
        json = JSON.parse(await readBody());
      } catch (error) {
        if (error instanceof RequestError) throw error;
        throw new RequestError(400, "bad_request", "the body is not JSON");
      }
      const request = parse(MutateRequestSchema, json);
      if (!request.ok) throw new RequestError(400, "bad_request", request.message);
      return { status: 200, body: await process(request.value, { namespace, authorization }) };
    } catch (error) {
      if (error instanceof RequestError) {
        return { status: error.status, body: { error: error.code, message: error.message } };
      }
      // The database is unreachable or failed: weir answers the client, who pushes again.
      return { status: 503, body: { error: "app_unavailable", message: (error as Error).message } };
    }
  }

  const encode = (body: unknown) =>
    JSON.stringify(body, (_key, value) => (typeof value === "bigint" ? encodeWatermark(value) : value));

  return {
    process,
    async handleFetch(request) {
      const result = await answer(request.method, request.headers, async () => {
        const text = await request.text();
        if (text.length > MAX_BODY_BYTES)
          throw new RequestError(413, "payload_too_large", "the body is too large");
        return text;
      });
      return new Response(encode(result.body), {
        status: result.status,
        headers: { "content-type": "application/json" },
      });
    },
    async handleNode(req, res) {
      const headers = {
        get: (name: string) => {
          const value = req.headers[name];
          return value === undefined ? null : Array.isArray(value) ? value.join(", ") : value;
        },
      };
      const result = await answer(req.method ?? "GET", headers, async () => {
        const chunks: Buffer[] = [];
        let size = 0;
        for await (const chunk of req) {
          size += (chunk as Buffer).length;
          if (size > MAX_BODY_BYTES)
            throw new RequestError(413, "payload_too_large", "the body is too large");
          chunks.push(chunk as Buffer);
        }
        return Buffer.concat(chunks).toString("utf8");
      });
      res.writeHead(result.status, { "content-type": "application/json" });
      res.end(encode(result.body));
    },
  };
}
