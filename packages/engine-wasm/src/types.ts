import type { Dialect } from "@weir/protocol";
import type { QueryPages } from "./query-pages.js";

/** A value SQLite stores and a `SqlAdapter` binds or returns. */
export type SqlValue = null | number | bigint | string | Uint8Array;

/**
 * Synchronous access to one namespace's SQLite database. The engine never begins or ends a
 * transaction: the host wraps each engine call in one (`db.transaction(fn)` in better-sqlite3,
 * `ctx.storage.transactionSync` in a Durable Object).
 */
export interface SqlAdapter {
  /** Runs a statement that returns rows; each row is an array of column values in order. */
  query(sql: string, params: readonly SqlValue[]): SqlValue[][];
  /** Runs a statement that returns no rows; answers how many rows it changed. */
  exec(sql: string, params: readonly SqlValue[]): number;
  /**
   * Defines a SQL function that calls back into JavaScript, where the driver can (better-sqlite3,
   * sql.js; a Durable Object's SQL cannot). The engine meters query work with it: without it,
   * `PullInput.queryBudgetMs` is not enforced.
   */
  defineFunction?(name: string, fn: (...args: SqlValue[]) => SqlValue): void;
}

export type { ColumnSchema, ColumnType, Schema, TableSchema } from "@weir/protocol";

/**
 * Which rows of a table a caller may see: a boolean SQL expression over the table's columns,
 * with `?` placeholders bound in order to `params` (never spliced into the SQL).
 * Example: `{ sql: "owner = ?", params: [claims.userID] }`.
 */
export interface VisibilityFilter {
  sql: string;
  params?: readonly SqlValue[];
}

/** Filters by table name. A table without a filter is visible in full. */
export type Visibility = Record<string, VisibilityFilter>;

export interface PullInput {
  clientGroupID: string;
  /** The authenticated user; a client group belongs to the first user that used it. */
  userID: string;
  cookie: number | null;
  dialect?: Dialect;
  visibility?: Visibility;
  /** Defaults 10,000 and 2,000,000. A full reset is not capped. */
  maxChangeRows?: number;
  maxChangeBytes?: number;
  /**
   * A query-aware pull (native dialect): the group's rows become those its active queries hold,
   * and `patch` changes which are active. A group that pulled with queries once answers by its
   * queries from then on, with or without this field.
   */
  queries?: {
    patch: readonly QueryPatchOp[];
    /** The host's query transform version, stored for the group (see `groupQueries`). */
    transformVersion?: string;
  };
  /**
   * A query-aware pull's budget: the rows its query evaluations may produce (default 1,000,000);
   * past it the pull is refused (`query_budget_exceeded`) and changes nothing.
   */
  maxQueryRows?: number;
  /**
   * The time one query's evaluation may take in this pull, in ms, counted while its EXISTS probes run (where
   * a query's work can outgrow its tables), or its root's rows are read when it has none, and
   * while its related subqueries and EXISTS witnesses read rows; past it the statement is stopped and the pull refused
   * (`query_budget_exceeded`, naming the query), changing nothing. Enforced on adapters with
   * `defineFunction`. Default: none.
   */
  queryBudgetMs?: number;
  /**
   * The time one query's evaluation may take in all, in ms, over the pulls it is read in (ranges
   * of its root's table, pages of a window, a paging pull's runs), counted as `queryBudgetMs` is;
   * past it the pull is refused as past that. Default (and at least): `queryBudgetMs`.
   */
  queryTotalBudgetMs?: number;
  /**
   * How long, in ms, a metered query-aware pull (one with `queryBudgetMs`) may run before its
   * answer renders no more rows: past it the answer is cut between rows, at least one page of
   * them sent, and the rest stay owed, as when `maxChangeRows` cuts it. Default: `queryBudgetMs`.
   */
  answerMs?: number;
  /**
   * Reads the roots of the queries the pull evaluates in pages, and stops the pull between pages
   * once it has run the pages' time (`QueryPageTurn`, after its transaction is rolled back): the
   * caller runs it again with the same `QueryPages` after other requests had their turn. Only
   * with `queryBudgetMs`, on drivers with `defineFunction`. Default: none (one statement each).
   */
  queryPages?: QueryPages;
  /**
   * False: the answer's `gotQueries` is left empty instead of naming the group's complete queries
   * (a step of a patch applied in several pulls, before the last, whose answer no client sees;
   * the names cost a read of every complete query's rows while rows are owed). Default: true.
   */
  nameCompleteQueries?: boolean;
  /** Queries one group may hold (default: no cap); a put past it is refused (`query_budget_exceeded`). */
  maxGroupQueries?: number;
  /** Bytes of stored arguments one group's queries may hold (default: no cap); likewise. */
  maxGroupQueryBytes?: number;
  /**
   * Other client groups of the same user, at the same cookie and pulled under the same
   * visibility, that the caller expects to hold the same queries (a query-aware pull with no
   * query changes; the engine does not store which visibility a group's rows were read under). Those the engine finds holding this
   * group's state exactly (same queries and plans, membership at the cookie, nothing owed) take
   * this pull's answer, with their own lastMutationIDChanges, at the cost of a few statements for
   * all of them (`PullResult.followed`); the others are left as they were, for pulls of their own.
   */
  followers?: readonly string[];
}

/** A change to a group's active queries; a put carries the AST the server resolved its name to. */
/** A named query as an install indexes it: its name and an AST of its shape (see Engine.install). */
export interface NamedQueryShape {
  name: string;
  ast: unknown;
}

/** What Engine.install did. */
export interface InstallResult {
  outcome: "created" | "unchanged" | "migrated";
  /** The named queries given whose AST the engine cannot answer, with why: not indexed now (none: absent). */
  unindexed?: { name: string; message: string }[];
}

export type QueryPatchOp =
  | { op: "put"; hash: string; name: string; args: unknown; ast: unknown }
  | { op: "del"; hash: string }
  | { op: "clear" };

export interface PullResult {
  /** The complete response body in the requested dialect, ready to send. */
  body: string;
  cookie: number;
  unchanged: boolean;
  /** True when the patch starts with `clear` (null cookie, cookie below the floor, invalidation). */
  reset: boolean;
  puts: number;
  dels: number;
  /** How many clients' last mutation ids the answer reports. */
  lastMutationIDs: number;
  watermark: number;
  floor: number;
  /** A query-aware pull: the rows its query evaluations produced, and the queries it evaluated. */
  queryRowsExamined: number;
  /**
   * Rows the query evaluations' EXISTS probes (or roots without one), related subqueries and
   * EXISTS witnesses examined (0: not metered).
   */
  queryWork: number;
  queriesRecomputed: number;
  /**
   * Of `queriesRecomputed`, the queries whose rows were copied from another group holding the
   * same query at the same version under the same visibility, instead of evaluated.
   */
  queriesCopied: number;
  /**
   * The answer was cut by a cap (`maxChangeRows`, `maxChangeBytes`): more is owed and the client
   * pulls again at once. A cut query-aware answer's cookie is a new version, the `watermark` now.
   */
  more: boolean;
  /** The followers (`PullInput.followers`) that took this answer, each with its own body. */
  followed?: FollowedPull[];
}

/** A follower's answer: the leader's, with the follower's own last mutation ids. */
export interface FollowedPull extends Omit<PullResult, "followed"> {
  clientGroupID: string;
}

export interface MutationRef {
  clientGroupID: string;
  clientID: string;
  mutationID: number;
}

export type PreflightStatus = "apply" | "replay" | "ooo";

export interface Preflight {
  status: PreflightStatus;
  /** The client's last processed mutation id (0 for a new client). */
  lastMutationID: number;
}

export interface EngineState {
  engineVersion: string;
  watermark: number;
  floor: number;
  changes: number;
  clients: number;
  clientGroups: number;
}

export interface PruneResult {
  deleted: number;
  floor: number;
  /** True when the batch limit stopped the prune before the floor was reached. */
  more: boolean;
}

/** A snapshot generation being built (see `Engine.beginSnapshot`). */
export interface SnapshotProgress {
  generation: number;
  /** The upstream watermark of the generation's first page: its catch-up starts there. */
  startWatermark: string;
  /** The table being paged, and the cursor of its next page (null: its first). */
  table: string | null;
  cursor: string | null;
  state: "paging" | "catching_up";
  catchupWatermark: string;
}

export interface UpstreamState {
  /** The upstream watermark every applied batch reached, as a decimal string; null before any. */
  cursor: string | null;
  fence: number;
  generation: number;
  snapshot: SnapshotProgress | null;
}

export interface UpstreamApplyResult {
  /** The batch was at or below the cursor: nothing changed. */
  alreadyApplied: boolean;
  /** Rows written (inserted, updated or deleted). */
  rows: number;
  /** The cursor (or the catch-up watermark) after the batch. */
  cursor: string;
  /** Whether a new version was committed (only rows of modelled tables make one). */
  committed: boolean;
}

/** A row a query holds: its table and its primary key's values in key order. */
export interface HeldRow {
  /** 0 for the root query's rows, else the related subquery's position in depth-first order. */
  node: number;
  table: string;
  key: unknown[];
}
