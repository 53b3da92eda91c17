import { type Engine, loadEngine } from "@weir/engine-wasm";
import type { WeirConfig } from "@weir/host-core";

/** The isolate's engine for a config (see `createSyncDurableObject` and its lean entry). */
export type EngineFor = (config: WeirConfig) => Promise<Engine>;

const shared = new Map<WebAssembly.Module, Promise<Engine>>();

/**
 * The isolate's engine of a module, instantiated once from the module the bundler compiled. One
 * instance serves every object of the isolate: its calls are synchronous and take the database
 * they run on.
 */
export function loadEdgeEngine(module: WebAssembly.Module): Promise<Engine> {
  let engine = shared.get(module);
  if (!engine) {
    engine = loadEngine(module).catch((error: unknown) => {
      shared.delete(module);
      throw error;
    });
    shared.set(module, engine);
  }
  return engine;
}

/**
 * Whether a config needs the query engine: it names queries. Zero's clients read only through
 * named queries, so a config without any serves them no rows; the lean engine refuses their
 * pulls (each Zero poke is a query-aware pull) with `queries_disabled`, as a namespace whose
 * queries are switched off does.
 */
export function needsQueryEngine(config: WeirConfig): boolean {
  return Object.keys(config.queries ?? {}).length > 0;
}
