/**
 * The boundary with the compiled engine: instantiation, and strings in and out of its memory.
 * AssemblyScript strings are UTF-16 in linear memory, preceded by their byte length.
 */

import { type CallDeclaration, ENGINE_CALLS, type EngineCalls } from "./engine-calls.js";

/** What the engine imports: a synchronous SQL adapter by statement number (see assembly/host.ts). */
export interface EngineHost {
  prepare(sql: string): number;
  query(statement: number, params: string): string;
  queryPayload(statement: number, params: string): string;
  queryJoinedPayloads(statement: number, params: string): number;
  exec(statement: number, params: string): number;
}

/**
 * The engine's exports, with strings as JS strings and numbers as safe-integer JS numbers: the
 * calls declared in engine-calls.ts, each taking its parameters by name.
 */
export interface EngineModule extends EngineCalls {
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

const CALL_NAMES = Object.keys(ENGINE_CALLS) as (keyof typeof ENGINE_CALLS)[];

/**
 * An instance's exports: its memory and allocator, and each declared call as a function of
 * numbers, in CALL_NAMES' order.
 */
function exportsOf(instance: WebAssembly.Instance): { raw: RawExports; calls: RawFunction[] } {
  const raw = instance.exports as unknown as RawExports;
  const calls = CALL_NAMES.map((name) => {
    const fn = raw[name];
    if (typeof fn !== "function") throw new EngineFailure(`the engine does not export ${name}`);
    return fn as RawFunction;
  });
  return { raw, calls };
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

  // The memory's buffer is read again only when the one held is detached (a memory that grows
  // detaches its buffer; a buffer of the memory is never empty): reading `memory.buffer` is a
  // call into the runtime, and every string crossing would pay it.
  const views = () => {
    if (buffer !== undefined && buffer.byteLength !== 0) return;
    buffer = wasm!.raw.memory.buffer as ArrayBuffer;
    u16 = new Uint16Array(buffer);
    u32 = new Uint32Array(buffer);
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

  /**
   * A declared call as the loader offers it: its named parameters lowered in declared order
   * (strings into the engine's memory, booleans to 0 or 1), its answer lifted. The minimal runtime
   * collects only when asked, so the lowered strings need no pinning.
   */
  const glue = (index: number, declaration: CallDeclaration) => {
    const names = Object.keys(declaration.params);
    const kinds = names.map((param) => declaration.params[param]!);
    const answer = declaration.answer;
    const args = new Array<number>(names.length);
    return (named?: Record<string, unknown>) => {
      for (let i = 0; i < names.length; i++) {
        const value = named![names[i]!];
        const kind = kinds[i];
        args[i] =
          kind === "string" ? lower(value as string) : kind === "bool" ? (value ? 1 : 0) : (value as number);
      }
      const result = wasm!.calls[index]!(...args);
      if (answer === "string") return lift(result);
      return answer === "void" ? undefined : result;
    };
  };
  const calls: Record<string, unknown> = {};
  CALL_NAMES.forEach((name, index) => {
    calls[name] = glue(index, ENGINE_CALLS[name]);
  });

  return {
    ...(calls as unknown as EngineCalls),
    collect: () => wasm!.raw.__collect(),
    memoryBytes: () => {
      views();
      return buffer!.byteLength;
    },
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
