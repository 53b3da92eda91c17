import type { MutateAnswer, MutateRequest } from "@weir/protocol";
import {
  createMutateEndpoint,
  type MutateLedger,
  type MutationContext,
  type MutationOutcome,
  mutatorNamed,
  processMutations,
} from "@weir/upstream";
import type pg from "pg";
import { parseLsn } from "./lsn.js";
import { quoteIdentifier } from "./quote-identifier.js";

/** What a mutator knows of the mutation it runs (the mutate core's context). */
export type PushContext = MutationContext;

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
  /** The largest mutate body read, in bytes (default 4 MiB, weir's own push limit's default). */
  maxBodyBytes?: number;
}

export interface PushProcessor {
  /** Runs a delegated push: each mutation in a transaction of its own, exactly once. */
  process(
    request: MutateRequest,
    context: { namespace: string; authorization: string | null },
  ): Promise<MutateAnswer>;
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
  ): Promise<MutationOutcome> {
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
      const mutator = mutatorNamed(options.mutators, mutation.name);
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

  /** The clients' ledger on one pooled connection, for one push. */
  const pgLedger = (client: pg.PoolClient): MutateLedger => ({
    apply: (mutation, context, last) => applyOne(client, mutation, context, last),
    // Every commit of the push starts before this position: weir's upstream has them all once it
    // is through the position less one (watermarks are commit LSNs). Read after the last commit,
    // or now when the last mutation was a replay (which another request may have committed only
    // while this one waited for its lock).
    watermark: async (position) => {
      const at = position ?? parseLsn((await client.query<{ lsn: string }>(positionQuery)).rows[0]!.lsn);
      return at - 1n;
    },
    retryable: (error) => RETRIED_SQLSTATES.has((error as { code?: string }).code ?? ""),
  });

  async function process(
    request: MutateRequest,
    context: { namespace: string; authorization: string | null },
  ): Promise<MutateAnswer> {
    await ensureTable();
    const connection = await options.pool.connect();
    try {
      return await processMutations(pgLedger(connection), request, context);
    } finally {
      connection.release();
    }
  }

  const endpoint = createMutateEndpoint({
    process,
    authorize: options.authorize,
    maxBodyBytes: options.maxBodyBytes,
  });
  return { process, handleFetch: endpoint.handleFetch, handleNode: endpoint.handleNode };
}
