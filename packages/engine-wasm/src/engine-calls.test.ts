import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ENGINE_CALLS } from "./engine-calls.js";
import { engineWasmUrl } from "./engine-wasm-url.js";

const RUNTIME_EXPORTS = new Set(["memory", "__new", "__pin", "__unpin", "__collect", "__rtti_base"]);

/** Each `export function` of the engine's entry, its parameters' names and types and its answer's. */
function declaredExports(source: string): Map<string, { params: [string, string][]; answer: string }> {
  const found = new Map<string, { params: [string, string][]; answer: string }>();
  const pattern = /export function (\w+)\(([^)]*)\):\s*(\w+)\s*\{/g;
  for (const match of source.matchAll(pattern)) {
    const params = match[2]!
      .split(",")
      .map((param) => param.trim())
      .filter((param) => param.length > 0)
      .map((param) => param.split(":").map((part) => part.trim()) as [string, string]);
    found.set(match[1]!, { params, answer: match[3]! });
  }
  return found;
}

describe("the engine's declared calls", () => {
  const source = readFileSync(new URL("../assembly/index.ts", import.meta.url), "utf8");
  const exported = declaredExports(source);

  it("are the entry's exports, parameter for parameter, in order and of the declared kinds", () => {
    const declared = new Map(
      Object.entries(ENGINE_CALLS).map(([name, call]) => [
        name,
        { params: Object.entries(call.params) as [string, string][], answer: call.answer as string },
      ]),
    );
    expect(Object.fromEntries(exported)).toEqual(Object.fromEntries(declared));
  });

  it("are what the compiled module exports, each taking as many arguments", async () => {
    const module = await WebAssembly.compile(readFileSync(engineWasmUrl));
    const functions = WebAssembly.Module.exports(module)
      .filter(({ kind, name }) => kind === "function" && !RUNTIME_EXPORTS.has(name))
      .map(({ name }) => name)
      .sort();
    expect(functions).toEqual(Object.keys(ENGINE_CALLS).sort());
    const instance = await WebAssembly.instantiate(module, {
      env: { abort: () => {} },
      host: {
        prepare: () => 0,
        query: () => 0,
        queryPayload: () => 0,
        queryJoinedPayloads: () => 0,
        exec: () => 0,
      },
    });
    for (const [name, call] of Object.entries(ENGINE_CALLS)) {
      expect([name, (instance.exports[name] as (...args: unknown[]) => unknown).length]).toEqual([
        name,
        Object.keys(call.params).length,
      ]);
    }
  });
});
