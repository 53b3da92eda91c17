/**
 * The boundary with the compiled engine: instantiation, and strings in and out of its memory.
 * AssemblyScript strings are UTF-16 in linear memory, preceded by their byte length.
 */

/** What the engine imports: a synchronous SQL adapter by statement number (see assembly/host.ts). */
export interface EngineHost {
  prepare(sql: string): number;
  query(statement: number, params: string): string;
  queryPayload(statement: number, params: string): string;
  queryJoinedPayloads(statement: number, params: string): number;
  exec(statement: number, params: string): number;
}

/** The engine's exports, with strings as JS strings and numbers as safe-integer JS numbers. */
export interface EngineModule {
  engineVersion(): string;
  registerSchema(text: string): number;
  install(schema: number): string;
  pull(
    schema: number,
    groupID: string,
    userID: string,
    cookie: number,
    format: number,
    maxRows: number,
    maxBytes: number,
    visibility: string,
    caughtUpOnly: boolean,
    queriesSupplied: boolean,
    queryPatch: string,
    maxQueryRows: number,
    /** The extra parameter holding the followers' ids as a JSON array (-1: none). */
    followersExtra: number,
    /** The extra parameter holding the visibility's identity (-1: none; no rows are copied). */
    visibilityExtra: number,
    /** The extra parameter holding the identity the group's rows are answered under. */
    claimsExtra: number,
  ): string;
  /** What the next pull's queries may do (see assembly/query/limits.ts). */
  queryLimits(metered: boolean, maxGroupQueries: number, maxGroupQueryBytes: number): void;
  claimGroup(groupID: string, userID: string): string;
  preflight(groupID: string, clientID: string, id: number): string;
  finalize(groupID: string, clientID: string, id: number): void;
  /** The batch's client ids go as the host's extra parameters; `plan` has a line of ids per client. */
  preflightBatch(groupID: string, plan: string): string;
  /** The batch's client ids go as the host's extra parameters; `lastIDs` has a line per client. */
  finalizeBatch(groupID: string, lastIDs: string): void;
  prune(retain: number, limit: number): string;
  /** Commits the changes pending in the caller's transaction: "<watermark>\t<committed 1|0>". */
  commit(): string;
  invalidate(): void;
  upstreamState(): string;
  claimFence(): number;
  applyUpstream(
    schema: number,
    plan: string,
    watermark: string,
    fence: number,
    intoSnapshot: boolean,
  ): string;
  beginSnapshot(schema: number, watermark: string, fence: number): string;
  applySnapshotPage(schema: number, table: string, nextCursor: string, last: boolean, fence: number): string;
  finalizeSnapshot(schema: number, fence: number): string;
  groupQueries(groupID: string): string;
  /** "<table>\t<key>" lines; the visibility's values are the host's extra parameters. */
  evaluateQuery(schema: number, plan: string, visibility: string): string;
  state(): string;
  listChanges(since: number, limit: number): string;
  clients(): string;
  groupMutationIDs(groupID: string, userID: string): string;
  /** Frees what the engine allocated and no longer uses; call between engine calls. */
  collect(): void;
  memoryBytes(): number;
  /**
   * Replaces the instance with a new one. A WebAssembly memory never shrinks, so this is the only
   * way to give back what a large call grew; it also drops whatever state a trap left behind.
   * Registered schemas are forgotten (register them again); statement numbers come from the host.
   */
  renew(): void;
}

interface RawExports {
  memory: WebAssembly.Memory;
  __new(size: number, classID: number): number;
  __collect(): void;
  [name: string]: unknown;
}

type RawFunction = (...args: number[]) => number;

const STRING_CLASS_ID = 2;
// Below this many characters a loop beats setting up a decoder.
const DECODE_THRESHOLD = 32;

/** An instance's exports, as functions of numbers. */
function exportsOf(instance: WebAssembly.Instance) {
  const raw = instance.exports as unknown as RawExports;
  const fn = (name: string) => raw[name] as RawFunction;
  return {
    raw,
    engineVersion: fn("engineVersion"),
    registerSchema: fn("registerSchema"),
    install: fn("install"),
    pull: fn("pull"),
    queryLimits: fn("queryLimits"),
    claimGroup: fn("claimGroup"),
    preflight: fn("preflight"),
    finalize: fn("finalize"),
    preflightBatch: fn("preflightBatch"),
    finalizeBatch: fn("finalizeBatch"),
    prune: fn("prune"),
    invalidate: fn("invalidate"),
    state: fn("state"),
    evaluateQuery: fn("evaluateQuery"),
    groupQueries: fn("groupQueries"),
    listChanges: fn("listChanges"),
    clients: fn("clients"),
    groupMutationIDs: fn("groupMutationIDs"),
    commit: fn("commit"),
    upstreamState: fn("upstreamState"),
    claimFence: fn("claimFence"),
    applyUpstream: fn("applyUpstream"),
    beginSnapshot: fn("beginSnapshot"),
    applySnapshotPage: fn("applySnapshotPage"),
    finalizeSnapshot: fn("finalizeSnapshot"),
  };
}

export async function instantiateEngine(
  source: WebAssembly.Module | BufferSource,
  host: EngineHost,
): Promise<EngineModule> {
  const module = source instanceof WebAssembly.Module ? source : await WebAssembly.compile(source);
  let wasm: ReturnType<typeof exportsOf> | undefined;
  let buffer: ArrayBuffer | undefined;
  let u16 = new Uint16Array(0);
  let u32 = new Uint32Array(0);
  const decoder = new TextDecoder("utf-16le");

  const views = () => {
    const current = wasm!.raw.memory.buffer as ArrayBuffer;
    if (current !== buffer) {
      buffer = current;
      u16 = new Uint16Array(current);
      u32 = new Uint32Array(current);
    }
  };

  // WASM hands pointers over as i32, which JS reads as signed: past 2 GiB of memory they would
  // be negative. `>>> 0` reads every pointer and length as the unsigned number it is.
  const lift = (signed: number): string => {
    const pointer = signed >>> 0;
    if (pointer === 0) return "";
    views();
    const bytes = u32[(pointer - 4) >>> 2]! >>> 0;
    const length = bytes >>> 1;
    if (length >= DECODE_THRESHOLD) return decoder.decode(new Uint8Array(buffer!, pointer, bytes));
    const start = pointer >>> 1;
    let text = "";
    for (let i = 0; i < length; i++) text += String.fromCharCode(u16[start + i]!);
    return text;
  };

  const lower = (text: string): number => {
    const pointer = wasm!.raw.__new(text.length << 1, STRING_CLASS_ID) >>> 0;
    views();
    const start = pointer >>> 1;
    for (let i = 0; i < text.length; i++) u16[start + i] = text.charCodeAt(i);
    return pointer;
  };

  const imports = {
    env: {
      abort(message: number, file: number, line: number, column: number): never {
        throw new EngineFailure(`engine aborted: ${lift(message)} at ${lift(file)}:${line}:${column}`);
      },
    },
    host: {
      prepare: (sql: number) => host.prepare(lift(sql)),
      query: (statement: number, params: number) => lower(host.query(statement, lift(params))),
      queryPayload: (statement: number, params: number) => lower(host.queryPayload(statement, lift(params))),
      queryJoinedPayloads: (statement: number, params: number) =>
        host.queryJoinedPayloads(statement, lift(params)),
      exec: (statement: number, params: number) => host.exec(statement, lift(params)),
    },
  };
  wasm = exportsOf(await WebAssembly.instantiate(module, imports));

  return {
    engineVersion: () => lift(wasm!.engineVersion()),
    registerSchema: (text) => wasm!.registerSchema(lower(text)),
    install: (schema) => lift(wasm!.install(schema)),
    pull: (
      schema,
      groupID,
      userID,
      cookie,
      format,
      maxRows,
      maxBytes,
      visibility,
      caughtUpOnly,
      queriesSupplied,
      queryPatch,
      maxQueryRows,
      followersExtra,
      visibilityExtra,
      claimsExtra,
    ) => {
      // The minimal runtime collects only when asked, so arguments need no pinning.
      const group = lower(groupID);
      const user = lower(userID);
      const filters = lower(visibility);
      const patch = lower(queryPatch);
      return lift(
        wasm!.pull(
          schema,
          group,
          user,
          cookie,
          format,
          maxRows,
          maxBytes,
          filters,
          caughtUpOnly ? 1 : 0,
          queriesSupplied ? 1 : 0,
          patch,
          maxQueryRows,
          followersExtra,
          visibilityExtra,
          claimsExtra,
        ),
      );
    },
    queryLimits: (metered, maxGroupQueries, maxGroupQueryBytes) => {
      wasm!.queryLimits(metered ? 1 : 0, maxGroupQueries, maxGroupQueryBytes);
    },
    claimGroup: (groupID, userID) => {
      const group = lower(groupID);
      return lift(wasm!.claimGroup(group, lower(userID)));
    },
    preflight: (groupID, clientID, id) => {
      const group = lower(groupID);
      return lift(wasm!.preflight(group, lower(clientID), id));
    },
    finalize: (groupID, clientID, id) => {
      const group = lower(groupID);
      wasm!.finalize(group, lower(clientID), id);
    },
    preflightBatch: (groupID, plan) => {
      const group = lower(groupID);
      return lift(wasm!.preflightBatch(group, lower(plan)));
    },
    finalizeBatch: (groupID, lastIDs) => {
      const group = lower(groupID);
      wasm!.finalizeBatch(group, lower(lastIDs));
    },
    prune: (retain, limit) => lift(wasm!.prune(retain, limit)),
    commit: () => lift(wasm!.commit()),
    upstreamState: () => lift(wasm!.upstreamState()),
    claimFence: () => wasm!.claimFence(),
    applyUpstream: (schema, plan, watermark, fence, intoSnapshot) => {
      const planText = lower(plan);
      return lift(wasm!.applyUpstream(schema, planText, lower(watermark), fence, intoSnapshot ? 1 : 0));
    },
    beginSnapshot: (schema, watermark, fence) => lift(wasm!.beginSnapshot(schema, lower(watermark), fence)),
    applySnapshotPage: (schema, table, nextCursor, last, fence) => {
      const tableText = lower(table);
      return lift(wasm!.applySnapshotPage(schema, tableText, lower(nextCursor), last ? 1 : 0, fence));
    },
    finalizeSnapshot: (schema, fence) => lift(wasm!.finalizeSnapshot(schema, fence)),
    invalidate: () => {
      wasm!.invalidate();
    },
    state: () => lift(wasm!.state()),
    groupQueries: (groupID) => lift(wasm!.groupQueries(lower(groupID))),
    evaluateQuery: (schema, plan, visibility) => {
      const planText = lower(plan);
      return lift(wasm!.evaluateQuery(schema, planText, lower(visibility)));
    },
    listChanges: (since, limit) => lift(wasm!.listChanges(since, limit)),
    clients: () => lift(wasm!.clients()),
    groupMutationIDs: (groupID, userID) => {
      const group = lower(groupID);
      return lift(wasm!.groupMutationIDs(group, lower(userID)));
    },
    collect: () => wasm!.raw.__collect(),
    memoryBytes: () => wasm!.raw.memory.buffer.byteLength,
    renew: () => {
      // Synchronous, from the module already compiled (which Workers allow too), so that a call
      // can follow at once.
      wasm = exportsOf(new WebAssembly.Instance(module, imports));
      buffer = undefined;
    },
  };
}

/**
 * The engine itself failed (a trap, a failed assertion, an allocation it could not make): a bug
 * or exhaustion, never a refusal of the request. The instance that failed has been replaced.
 */
export class EngineFailure extends Error {
  override readonly name = "EngineFailure";
}
