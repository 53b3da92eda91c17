import { readFile } from "node:fs/promises";
import { type Engine, engineWasmUrl, loadEngine } from "@weir/engine-wasm";

let compiled: Promise<WebAssembly.Module> | undefined;

/** A fresh engine instance; the module is compiled once per process. */
export async function loadNodeEngine(): Promise<Engine> {
  compiled ??= readFile(engineWasmUrl).then((bytes) => WebAssembly.compile(bytes));
  return loadEngine(await compiled);
}
