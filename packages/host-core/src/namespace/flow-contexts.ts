import type { Engine, QueryPages } from "@weir/engine-wasm";
import type { Claims } from "../auth/claims.js";
import type { ResolvedConfig } from "../config/weir-config.js";
import type { MutateDelegate } from "../delegate/mutate-delegate.js";
import type {
  AdminContext,
  CommitEffects,
  DelegatedPushContext,
  IngestContext,
  KnobWriter,
  MutateForwarding,
  MutatorContextSource,
  NamespaceData,
  NamespaceStatus,
  PullContext,
  PushContext,
  QueryReads,
} from "../flows/flow-context.js";
import { HttpError } from "../http/http-error.js";
import type { NamespaceIngest } from "../ingest/namespace-ingest.js";
import type { NamespaceStore } from "../ports/storage.js";
import type { ControlStore } from "./control-store.js";

/**
 * The parts a namespace's flows are given, each a plain object (a context is assembled by
 * spreading them, which copies own properties only: no getters, no class instances).
 */
export interface FlowParts {
  data: NamespaceData;
  knobs: KnobWriter;
  queries: QueryReads;
  mutators: MutatorContextSource;
  commits: CommitEffects;
  status: NamespaceStatus;
  /** Present without an upstream too: its calls then answer 404. */
  ingest: IngestContext;
  /** Null when pushes are not delegated to the app. */
  forwarding: MutateForwarding | null;
}

/** Each flow's context, assembled once when the namespace opens. */
export interface FlowContexts {
  readonly pull: PullContext;
  readonly push: PushContext;
  readonly admin: AdminContext;
  readonly ingest: IngestContext;
  /** Null when pushes are not delegated to the app. */
  readonly delegatedPush: DelegatedPushContext | null;
}

export function assembleContexts(parts: FlowParts): FlowContexts {
  const { data, knobs, queries, mutators, commits, status, ingest, forwarding } = parts;
  return {
    pull: { ...data, ...queries },
    push: { ...data, ...knobs, ...mutators, ...commits },
    admin: { ...data, ...knobs, ...status, ...commits },
    ingest,
    delegatedPush: forwarding && { ...data, ...forwarding, ...commits },
  };
}

/** The knobs' reads and writes, over the namespace's control table. */
export function knobWriter(control: ControlStore): KnobWriter {
  return { setKnob: (key, value) => control.set(key, value) };
}

/**
 * The config's queries and caps, and visibility as the operator switched it; `queryPages` makes a
 * pull's paging (the namespace's, which keeps what its pulls learnt of their ranges).
 */
export function queryReads(
  config: ResolvedConfig,
  control: ControlStore,
  queryPages: () => QueryPages,
): QueryReads {
  return {
    queryPages,
    queries: config.queries,
    tolerateUnknownQueries: config.tolerateUnknownQueries ?? false,
    queryTransformVersion: config.queryTransformVersion,
    caps: changeCaps(config),
    maxQueryRows: config.maxQueryRows,
    queryLimits: {
      queryBudgetMs: config.queryBudgetMs,
      queryTotalBudgetMs: config.queryTotalBudgetMs,
      queryPageMs: config.queryPageMs,
      queryAnswerMs: config.queryAnswerMs,
      maxGroupQueries: config.maxGroupQueries,
      maxGroupQueryBytes: config.maxGroupQueryBytes,
    },
    visibilityFor: (claims: Claims) =>
      config.visibility && control.knobs.visibilityEnabled ? config.visibility(claims) : undefined,
  };
}

export function changeCaps(config: ResolvedConfig): NamespaceStatus["caps"] {
  return { maxChangeRows: config.maxChangeRows, maxChangeBytes: config.maxChangeBytes };
}

/** The effective change-log retention: the admin knob, else the config. */
export function retainChanges(config: ResolvedConfig, control: ControlStore): () => number {
  return () => control.knobs.retainChanges ?? config.retainChanges;
}

/** Notify's and the ingest admin routes' view of the upstream; without one, every call is a 404. */
export function ingestPart(
  ingester: NamespaceIngest | null,
  upstreamCursor: () => string | null,
): IngestContext {
  const none = () => new HttpError("not_found", "this namespace has no upstream");
  return {
    upstreamCursor,
    ingest: (options) => (ingester ? ingester.answer(options) : Promise.reject(none())),
    reopenBreaker: (options) => {
      if (!ingester) throw none();
      return ingester.reopen(options);
    },
  };
}

export function forwardingPart(delegate: MutateDelegate | null): MutateForwarding | null {
  if (!delegate) return null;
  return {
    forward: (body, authorization) => delegate.forward(body, authorization),
    ingestEffects: (watermark) => delegate.ingestEffects(watermark),
  };
}

/** The upstream cursor the namespace reached (a decimal string), null before any batch. */
export function cursorReader(engine: Engine, store: NamespaceStore): () => string | null {
  return () => store.transaction(() => engine.upstreamState(store.db)).cursor;
}
