/**
 * The engine's calls, declared once: each export of `assembly/index.ts` by name, its parameters
 * by name and kind in the order the export takes them, and the kind of its answer. The loader's
 * glue (engine-module.ts) and its types are derived from this table, and engine-calls.test.ts
 * reads `assembly/index.ts` and fails when an export drifts from it.
 *
 * Kinds: `i32` (a schema handle, an extra parameter's index, -1 for none), `f64` (a number: the
 * engine takes them as i64; every one is a safe integer), `bool`, `string` (UTF-16 in the
 * engine's memory), and for answers also `void`.
 */
export const ENGINE_CALLS = {
  engineVersion: { params: {}, answer: "string" },
  /** 1: the build has the query engine (engine.wasm); 0: the lean build without it. */
  queryEngine: { params: {}, answer: "i32" },
  /** Parses a schema once; the same text answers the same handle. */
  registerSchema: { params: { text: "string" }, answer: "i32" },
  /** `queries`: "<name>\t<plan>" lines of extra parameter indexes, the named queries to index. */
  install: { params: { schema: "i32", queries: "string" }, answer: "string" },
  /** Answers "<meta>\n<body>", the meta's fields at the PULL_* positions of abi.ts. */
  pull: {
    params: {
      schema: "i32",
      groupID: "string",
      userID: "string",
      cookie: "f64",
      format: "i32",
      maxRows: "f64",
      maxBytes: "f64",
      visibility: "string",
      caughtUpOnly: "bool",
      queriesSupplied: "bool",
      queryPatch: "string",
      maxQueryRows: "f64",
      /** Whether the database has the query tables (a pull that supplies queries creates them). */
      queryTables: "bool",
      /** The extra parameter holding the followers' ids as a JSON array (-1: none). */
      followersExtra: "i32",
      /** The extra parameter holding the visibility's identity (-1: none; no rows are copied). */
      visibilityExtra: "i32",
      /** The extra parameter holding the identity the group's rows are answered under. */
      claimsExtra: "i32",
      /** Whether a reset is read in pages (the host defined `_weir_reset_pages`, see ResetPages). */
      pagedReset: "bool",
    },
    answer: "string",
  },
  /** What the next pull's queries may do (see assembly/query/limits.ts). */
  queryLimits: {
    params: { metered: "bool", maxGroupQueries: "f64", maxGroupQueryBytes: "f64", nameComplete: "bool" },
    answer: "void",
  },
  claimGroup: { params: { groupID: "string", userID: "string" }, answer: "string" },
  preflight: { params: { groupID: "string", clientID: "string", id: "f64" }, answer: "string" },
  finalize: { params: { groupID: "string", clientID: "string", id: "f64" }, answer: "void" },
  /** The batch's client ids go as the host's extra parameters; `plan` has a line of ids per client. */
  preflightBatch: { params: { groupID: "string", plan: "string" }, answer: "string" },
  /** The batch's client ids go as the host's extra parameters; `lastIDs` has a line per client. */
  finalizeBatch: { params: { groupID: "string", lastIDs: "string" }, answer: "void" },
  /** `queryTables`: whether the database has them (and so quiet versions and moves to prune). */
  prune: { params: { retain: "f64", limit: "f64", queryTables: "bool" }, answer: "string" },
  /** Commits the changes pending in the caller's transaction: "<watermark>\t<committed 1|0>". */
  commit: { params: {}, answer: "string" },
  invalidate: { params: {}, answer: "void" },
  state: { params: {}, answer: "string" },
  listChanges: { params: { since: "f64", limit: "f64" }, answer: "string" },
  clients: { params: {}, answer: "string" },
  /** A group's last mutation ids by client (JSON), when it is `userID`'s. */
  groupMutationIDs: { params: { groupID: "string", userID: "string" }, answer: "string" },
  upstreamState: { params: {}, answer: "string" },
  claimFence: { params: {}, answer: "f64" },
  /** A reduced batch's tables are lines of `plan`; their rows are the host's extra parameters. */
  applyUpstream: {
    params: { schema: "i32", plan: "string", watermark: "string", fence: "f64", intoSnapshot: "bool" },
    answer: "string",
  },
  beginSnapshot: { params: { schema: "i32", watermark: "string", fence: "f64" }, answer: "string" },
  /** The page's rows are the host's extra parameter 0. */
  applySnapshotPage: {
    params: { schema: "i32", table: "string", nextCursor: "string", last: "bool", fence: "f64" },
    answer: "string",
  },
  finalizeSnapshot: { params: { schema: "i32", fence: "f64" }, answer: "string" },
  /** A group's stored queries and query transform version (JSON). */
  groupQueries: { params: { groupID: "string" }, answer: "string" },
  /** "<node>\t<table>\t<key>" lines; the visibility's values are the host's extra parameters. */
  evaluateQuery: { params: { schema: "i32", plan: "string", visibility: "string" }, answer: "string" },
} as const satisfies Record<string, CallDeclaration>;

type ParamKind = "i32" | "f64" | "bool" | "string";
type AnswerKind = ParamKind | "void";

export interface CallDeclaration {
  readonly params: Readonly<Record<string, ParamKind>>;
  readonly answer: AnswerKind;
}

type Calls = typeof ENGINE_CALLS;
type CallName = keyof Calls;

type Value<K> = K extends "string"
  ? string
  : K extends "bool"
    ? boolean
    : K extends "void"
      ? undefined
      : number;

/** A call's parameters, by name. */
type CallArgs<N extends CallName> = {
  -readonly [P in keyof Calls[N]["params"]]: Value<Calls[N]["params"][P]>;
};

/** The engine's calls as the loader offers them: a call with parameters takes them as one object. */
export type EngineCalls = {
  [N in CallName]: keyof Calls[N]["params"] extends never
    ? () => Value<Calls[N]["answer"]>
    : (args: CallArgs<N>) => Value<Calls[N]["answer"]>;
};
