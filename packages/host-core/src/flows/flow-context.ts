import type { Engine, QueryPages, Visibility } from "@weir/engine-wasm";
import type { MutateRequest } from "@weir/protocol";
import type { Claims } from "../auth/claims.js";
import type { QueryDefinition } from "../config/weir-config.js";
import type { MutateOutcome } from "../delegate/mutate-call.js";
import type { ResponseParts } from "../http/http-parts.js";
import type { RequestRecord } from "../http/request-record.js";
import type { IngestPassResult } from "../ingest/ingest-pass.js";
import type { TableInfo } from "../mutators/column-codec.js";
import type { Mutator } from "../mutators/mutator.js";
import type { CommitScope } from "../namespace/wake-coalescer.js";
import type { Clock } from "../ports/clock.js";
import type { NamespaceStore } from "../ports/storage.js";
import type { CaughtUpPulls } from "./caught-up-pulls.js";
import type { Counters } from "./counters.js";
import type { Knobs } from "./knobs.js";

/** What a flow answers: the response and the fields it adds to the request's log line. */
export interface FlowResult {
  response: ResponseParts;
  log: Partial<RequestRecord>;
}

/*
 * A flow never sees the namespace service: it takes a context, and each context is a few of the
 * parts below, which the service assembles once from what it owns (`namespace/flow-contexts.ts`).
 * A flow that needs more adds a part (or widens one), not members of the service.
 */

/** What every flow reads of its namespace. */
export interface NamespaceData {
  readonly namespace: string;
  readonly engine: Engine;
  /** The namespace's database; every transaction on it forgets the caught-up answers. */
  readonly store: NamespaceStore;
  /** Caught-up pulls answered from memory; forgotten by every transaction of `store`. */
  readonly caughtUp: CaughtUpPulls;
  readonly knobs: Readonly<Knobs>;
  readonly counters: Counters;
  readonly clock: Clock;
  /** Whether nothing was written to the namespace yet: nothing is installed in its database. */
  readonly pristine?: () => boolean;
}

/** Changes a knob, stored in its own transaction (or the caller's) before it answers. */
export interface KnobWriter {
  setKnob<K extends keyof Knobs>(key: K, value: Knobs[K]): void;
}

/** What a pull reads besides the data: the config's queries and caps, visibility as switched. */
export interface QueryReads {
  /** The config's named queries and whether an unknown name is tolerated. */
  readonly queries: Readonly<Record<string, QueryDefinition>> | undefined;
  readonly tolerateUnknownQueries: boolean;
  readonly queryTransformVersion: number | ((claims: Claims) => number) | undefined;
  readonly caps: ChangeCaps;
  /** A query-aware pull's budget of rows its evaluations may produce. */
  readonly maxQueryRows: number;
  /** Each query's work budget and the caps of a group's queries (see WeirConfig). */
  readonly queryLimits: QueryLimits;
  /** The visibility filters for these claims, unless an operator switched visibility off. */
  visibilityFor(claims: Claims): Visibility | undefined;
  /**
   * A pull's paging (QueryPages): the config's page time, and the rows each query's ranges read
   * as the namespace's pulls learnt them (RangeSizes).
   */
  queryPages(): QueryPages;
}

export interface MutatorContextSource {
  readonly store: NamespaceStore;
  readonly mutators: Readonly<Record<string, Mutator>>;
  readonly tables: ReadonlyMap<string, TableInfo>;
}

/** What follows a commit: the clients it concerns are woken, effects run, retention paces. */
export interface CommitEffects {
  /** Wakes the clients a commit concerns, but for these writers' own sockets. */
  committed(writers: Iterable<string>, scope?: CommitScope): void;
  /** Runs effects queued with `tx.defer`, after their commit. */
  runDeferred(effects: Array<() => void | Promise<void>>): void;
  /** Retention after these many new versions (it runs now and then). */
  retention(newVersions: number): void;
}

/** What the status route and the retention knob read. */
export interface NamespaceStatus {
  /** The effective change-log retention: the admin knob, else the config. */
  retainChanges(): number;
  readonly caps: ChangeCaps;
  /** Open wake sockets, the database's size, process memory: for the status route. */
  wakeSockets(): number;
  sizeBytes(): number | null;
  memory(): Record<string, number>;
  /** The upstream ingest's state, null when the namespace has no upstream. */
  upstreamStatus(): Record<string, unknown> | null;
}

/** What notify and the ingest admin routes use of a namespace with an upstream. */
export interface IngestContext {
  /** The upstream cursor the namespace reached (a decimal string), null before any batch. */
  upstreamCursor(): string | null;
  /**
   * A pass now, or the next one when a pass is running (shared). Rejects while the breaker is
   * open (BreakerOpenError), after schema drift (IngestStoppedError), or with the upstream's
   * refusal (UpstreamCallError).
   */
  ingest(options: { resnapshot?: boolean }): Promise<IngestPassResult>;
  /** Closes the breaker with a fresh window and clears a stop. */
  reopenBreaker(options: { resnapshot?: boolean }): {
    wasOpen: boolean;
    pass: Promise<IngestPassResult> | null;
  };
}

/** The app's mutate endpoint, and ingest of what it wrote (delegated push). */
export interface MutateForwarding {
  /** Calls the app's mutate endpoint with the caller's Authorization (retrying as it may). */
  forward(body: MutateRequest, authorization: string | null): Promise<MutateOutcome>;
  /**
   * Ingests what the app wrote: passes that start after the call, until the cursor reaches
   * `watermark` (one pass without one). Rejects with an HttpError when it cannot.
   */
  ingestEffects(watermark: bigint | undefined): Promise<void>;
}

export interface PullContext extends NamespaceData, QueryReads {}

export interface PushContext extends NamespaceData, KnobWriter, MutatorContextSource, CommitEffects {}

export interface AdminContext extends NamespaceData, KnobWriter, NamespaceStatus, CommitEffects {}

export interface DelegatedPushContext extends NamespaceData, MutateForwarding, CommitEffects {}

/** A pull's caps on the changes one answer carries. */
interface ChangeCaps {
  readonly maxChangeRows: number;
  readonly maxChangeBytes: number;
}

/** What one group's queries may cost: a work budget per query, caps on what a group holds. */
interface QueryLimits {
  readonly queryBudgetMs: number;
  /** The time a query's evaluation may take over every pull it is read in (the engine's `queryTotalBudgetMs`). */
  readonly queryTotalBudgetMs: number;
  /** How long a native pull runs before other requests get a turn between its pages (QueryPages). */
  readonly queryPageMs: number;
  /** How long a query-aware answer aims to hold the thread (the engine's `answerMs`). */
  readonly queryAnswerMs: number;
  readonly maxGroupQueries: number;
  readonly maxGroupQueryBytes: number;
}
