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
    dialect: number,
    maxRows: number,
    maxBytes: number,
    visibility: string,
    caughtUpOnly: boolean,
  ): string;
  claimGroup(groupID: string, userID: string): string;
  preflightOne(groupID: string, clientID: string, id: number): string;
  finalizeOne(groupID: string, clientID: string, id: number): void;
  /** The batch's client ids go as the host's extra parameters; `plan` has a line of ids per client. */
  preflight(groupID: string, plan: string): string;
  /** The batch's client ids go as the host's extra parameters; `lastIDs` has a line per client. */
  finalize(groupID: string, lastIDs: string): void;
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
  state(): string;
  listChanges(since: number, limit: number): string;
  listClients(): string;
  /** Frees what the engine allocated and no longer uses; call between engine calls. */
  collect(): void;
  memoryBytes(): number;
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

export async function instantiateEngine(
  source: WebAssembly.Module | BufferSource,
  host: EngineHost,
): Promise<EngineModule> {
  const module = source instanceof WebAssembly.Module ? source : await WebAssembly.compile(source);
  let raw: RawExports | undefined;
  let buffer: ArrayBuffer | undefined;
  let u16 = new Uint16Array(0);
  let u32 = new Uint32Array(0);
  const decoder = new TextDecoder("utf-16le");

  const views = () => {
    const current = raw!.memory.buffer as ArrayBuffer;
    if (current !== buffer) {
      buffer = current;
      u16 = new Uint16Array(current);
      u32 = new Uint32Array(current);
    }
  };

  const lift = (pointer: number): string => {
    if (pointer === 0) return "";
    views();
    const bytes = u32[(pointer - 4) >>> 2]!;
    const length = bytes >>> 1;
    if (length >= DECODE_THRESHOLD) return decoder.decode(new Uint8Array(buffer!, pointer, bytes));
    const start = pointer >>> 1;
    let text = "";
    for (let i = 0; i < length; i++) text += String.fromCharCode(u16[start + i]!);
    return text;
  };

  const lower = (text: string): number => {
    const pointer = raw!.__new(text.length << 1, STRING_CLASS_ID) >>> 0;
    views();
    const start = pointer >>> 1;
    for (let i = 0; i < text.length; i++) u16[start + i] = text.charCodeAt(i);
    return pointer;
  };

  const imports = {
    env: {
      abort(message: number, file: number, line: number, column: number): never {
        throw new Error(`engine aborted: ${lift(message)} at ${lift(file)}:${line}:${column}`);
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
  const instance = await WebAssembly.instantiate(module, imports);
  raw = instance.exports as unknown as RawExports;
  const fn = (name: string) => raw![name] as RawFunction;
  const [
    engineVersion,
    registerSchema,
    install,
    pull,
    claimGroup,
    preflight,
    finalize,
    prune,
    invalidate,
    state,
  ] = [
    "engineVersion",
    "registerSchema",
    "install",
    "pull",
    "claimGroup",
    "preflight",
    "finalize",
    "prune",
    "invalidate",
    "state",
  ].map(fn) as RawFunction[];
  const listChanges = fn("listChanges");
  const preflightOne = fn("preflightOne");
  const finalizeOne = fn("finalizeOne");
  const listClients = fn("listClients");
  const commit = fn("commit");
  const upstream = {
    state: fn("upstreamState"),
    claimFence: fn("claimFence"),
    apply: fn("applyUpstream"),
    begin: fn("beginSnapshot"),
    page: fn("applySnapshotPage"),
    finalize: fn("finalizeSnapshot"),
  };

  return {
    engineVersion: () => lift(engineVersion!()),
    registerSchema: (text) => registerSchema!(lower(text)),
    install: (schema) => lift(install!(schema)),
    pull: (schema, groupID, userID, cookie, dialect, maxRows, maxBytes, visibility, caughtUpOnly) => {
      // The minimal runtime collects only when asked, so arguments need no pinning.
      const group = lower(groupID);
      const user = lower(userID);
      const filters = lower(visibility);
      return lift(
        pull!(schema, group, user, cookie, dialect, maxRows, maxBytes, filters, caughtUpOnly ? 1 : 0),
      );
    },
    claimGroup: (groupID, userID) => {
      const group = lower(groupID);
      return lift(claimGroup!(group, lower(userID)));
    },
    preflightOne: (groupID, clientID, id) => {
      const group = lower(groupID);
      return lift(preflightOne(group, lower(clientID), id));
    },
    finalizeOne: (groupID, clientID, id) => {
      const group = lower(groupID);
      finalizeOne(group, lower(clientID), id);
    },
    preflight: (groupID, plan) => {
      const group = lower(groupID);
      return lift(preflight!(group, lower(plan)));
    },
    finalize: (groupID, lastIDs) => {
      const group = lower(groupID);
      finalize!(group, lower(lastIDs));
    },
    prune: (retain, limit) => lift(prune!(retain, limit)),
    commit: () => lift(commit()),
    upstreamState: () => lift(upstream.state()),
    claimFence: () => upstream.claimFence(),
    applyUpstream: (schema, plan, watermark, fence, intoSnapshot) => {
      const planText = lower(plan);
      return lift(upstream.apply(schema, planText, lower(watermark), fence, intoSnapshot ? 1 : 0));
    },
    beginSnapshot: (schema, watermark, fence) => lift(upstream.begin(schema, lower(watermark), fence)),
    applySnapshotPage: (schema, table, nextCursor, last, fence) => {
      const tableText = lower(table);
      return lift(upstream.page(schema, tableText, lower(nextCursor), last ? 1 : 0, fence));
    },
    finalizeSnapshot: (schema, fence) => lift(upstream.finalize(schema, fence)),
    invalidate: () => {
      invalidate!();
    },
    state: () => lift(state!()),
    listChanges: (since, limit) => lift(listChanges(since, limit)),
    listClients: () => lift(listClients()),
    collect: () => raw!.__collect(),
    memoryBytes: () => raw!.memory.buffer.byteLength,
  };
}
