import type { Schema, Visibility } from "@weir/engine-wasm";
import type { Claims } from "../auth/claims.js";
import type { MutateConfig, ResolvedMutate } from "../delegate/mutate-config.js";
import type { AuthRequest } from "../http/http-parts.js";
import type { ResolvedUpstream, UpstreamConfig } from "../ingest/upstream-config.js";
import type { Mutator } from "../mutators/mutator.js";
import type { QuotaConfig, ResolvedQuotas } from "./quota-config.js";

export interface WeirConfig {
  /** The tables a namespace syncs. */
  schema: Schema;
  /** Named synchronous mutators, `(tx, args, ctx) => void`. */
  mutators: Record<string, Mutator>;
  /** Claims for a request (its method, URL and headers), or null to answer 401. */
  authenticate(request: AuthRequest): Claims | null | Promise<Claims | null>;
  /** Which rows these claims may see, by table. Without it every row is visible. */
  visibility?(claims: Claims): Visibility;
  /** Caps on one pull's changes. Defaults 10,000 rows and 2,000,000 bytes. */
  maxChangeRows?: number;
  maxChangeBytes?: number;
  /** How many versions of the change log to keep (default 100,000); older cookies reset. */
  retainChanges?: number;
  /** Wake coalescing window: at most one `wake` per socket per window (default 20 ms). */
  wakeWindowMs?: number;
  /** The `x-admin-key` that opens the admin routes. */
  adminKey?: string;
  /** Or a check of your own; admin routes are closed when neither is set. */
  isAdmin?(request: AuthRequest): boolean | Promise<boolean>;
  /** Largest request body accepted (default 4 MiB); beyond it 413. */
  maxBodyBytes?: number;
  /**
   * Whether these claims may use this namespace (pull, push, wake): false answers 403. Called
   * before the namespace is opened or created. Default: every namespace is open to everyone.
   */
  authorizeNamespace?(claims: Claims, namespace: string): boolean | Promise<boolean>;
  /** Namespaces open at once (default 1,000); at the cap the least recently used idle one closes. */
  maxOpenNamespaces?: number;
  /** Per-user budgets of requests and of new namespaces (see QuotaConfig). */
  quotas?: QuotaConfig;
  /** The system of record the namespaces replicate (see UpstreamConfig); none by default. */
  upstream?: UpstreamConfig;
  /** Delegated push to the app's own server (see MutateConfig); needs `upstream`. */
  mutate?: MutateConfig;
  /**
   * Named queries for query-aware pull: each resolves a client's args, with the caller's claims,
   * to a query AST (the subset of Zero's, see docs/protocol.md). Clients send names, never ASTs.
   */
  queries?: Record<string, QueryDefinition>;
  /**
   * Args of a named query whose AST has the shape its clients put (each element one client's
   * args), by name. At install the engine creates the indexes the queries' correlations,
   * `EXISTS` conditions and orderings need, from an AST of each; a query not listed here is
   * resolved with null, `[]`, `[""]` then `{}`, and indexed for the first its function answers.
   * A query answered for none gets its indexes when a client first puts it.
   */
  queryIndexArgs?: Record<string, readonly unknown[]>;
  /** Answer a query name the server does not define by reporting it (`unknownQueries`), not 400. */
  tolerateUnknownQueries?: boolean;
  /**
   * The version of what the query functions answer (a number, or one for these claims). When it
   * changes, a group's next query-aware pull re-resolves each of its queries and recomputes them.
   */
  queryTransformVersion?: number | ((claims: Claims) => number);
  /** The rows one query-aware pull's evaluations may produce (default 1,000,000); past it 422. */
  maxQueryRows?: number;
  /**
   * The time one query's evaluation may hold the thread in one pull (default 50 ms), counted in its EXISTS
   * probes, the rows its root reads when it has none, and the rows its related subqueries and
   * EXISTS witnesses read; past it the query is stopped and refused (422 `query_budget_exceeded` naming it; on a
   * Zero socket a `transformError` for it). Enforced on better-sqlite3 and sql.js.
   */
  queryBudgetMs?: number;
  /**
   * The time one query's evaluation may take in all (default 500 ms, at least `queryBudgetMs`),
   * counted as `queryBudgetMs` is over the pulls a large query is read in (ranges of its table,
   * pages of a window or of a root with EXISTS, each a step of an answer); past it the query is
   * refused as past that. Enforced on better-sqlite3 and sql.js.
   */
  queryTotalBudgetMs?: number;
  /**
   * How long one step of a request's query work aims to hold the thread (default 5 ms): a native
   * pull whose patch puts more queries than one step evaluates in that time applies it in steps,
   * each its own transaction, and gives other requests their turn between them. Unlike
   * `queryBudgetMs` it refuses nothing.
   */
  querySliceMs?: number;
  /**
   * How long a native query-aware pull holds the thread before other requests get their turn
   * (default 5 ms): a query whose root's condition holds an EXISTS is evaluated over its root
   * table a page at a time, and once the pull has run this long it is rolled back after the page
   * it is in and run again after a turn of the event loop, going on from the pages it kept (read
   * again should the namespace's version move). `queryBudgetMs` counts every run's time. 0: a
   * turn after every page. Paged on better-sqlite3 and sql.js, where queries are metered.
   */
  queryPageMs?: number;
  /**
   * How long a query-aware answer aims to hold the thread (default 30 ms, or `queryBudgetMs`
   * when that is less; the work after its last page, storing what it owes and committing, adds
   * about 10 to 20 ms, which the Node host's 50 ms `stepBudgetMs` leaves room for): one of more
   * than 1,024 rows is rendered 256 at a time and cut once the next page would end past it (the
   * rest owed, sent by the next pulls), and a reset evaluates no further query once the next
   * would (those wait for the next pulls). Each answer still sends a page and evaluates a query.
   * 0: one page and one query an answer. On better-sqlite3 and sql.js, where queries are metered.
   */
  queryAnswerMs?: number;
  /**
   * How long one slice of a push holds the thread (default 10 ms): a push's mutations are
   * committed a slice at a time, each slice its own transaction and version, and other requests
   * get their turn between slices. A slice runs at least 32 mutations (so a push of up to 32 is
   * always one version) and at most 1,024. Each mutation's writes commit with its id, so a failure
   * between slices keeps the slices before it. 0: slices of 32.
   */
  pushSliceMs?: number;
  /** Queries one client group may hold (default 1,000); a put past it is refused (422). */
  maxGroupQueries?: number;
  /** Bytes of stored arguments one client group's queries may hold (default 1 MiB); likewise. */
  maxGroupQueryBytes?: number;
}

/** A named query: its AST for these args and claims (throw to refuse the args: 400). */
export type QueryDefinition = (args: unknown, claims: Claims) => unknown;

export interface ResolvedConfig extends Omit<WeirConfig, "quotas" | "upstream" | "mutate"> {
  maxChangeRows: number;
  maxChangeBytes: number;
  retainChanges: number;
  wakeWindowMs: number;
  maxBodyBytes: number;
  maxOpenNamespaces: number;
  quotas: ResolvedQuotas;
  upstream: ResolvedUpstream | null;
  mutate: ResolvedMutate | null;
  maxQueryRows: number;
  queryBudgetMs: number;
  queryTotalBudgetMs: number;
  querySliceMs: number;
  queryPageMs: number;
  queryAnswerMs: number;
  pushSliceMs: number;
  maxGroupQueries: number;
  maxGroupQueryBytes: number;
}
