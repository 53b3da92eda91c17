import { type Engine, loadEngine } from "@weir/engine-wasm";
import engineModule from "@weir/engine-wasm/engine.wasm";

let shared: Promise<Engine> | undefined;

/**
 * The isolate's engine, instantiated once from the module the bundler compiled. One instance
 * serves every object of the isolate: its calls are synchronous and take the database they run on.
 */
export function loadEdgeEngine(): Promise<Engine> {
  shared ??= loadEngine(engineModule).catch((error: unknown) => {
    shared = undefined;
    throw error;
  });
  return shared;
}
