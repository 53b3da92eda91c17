import engineModule from "@weir/engine-wasm/engine.wasm";
import leanEngineModule from "@weir/engine-wasm/engine-lean.wasm";
import type { EdgeConfigSource } from "./edge-config.js";
import { loadEdgeEngine, needsQueryEngine } from "./load-edge-engine.js";
import { type SyncDurableObjectClass, syncObjectClass } from "./sync-object-class.js";

/**
 * The Durable Object class of one namespace (see `syncObjectClass`). The Worker ships both
 * builds of the engine and an isolate loads one: the full one when the config names queries,
 * otherwise the lean one without the query engine. `@weir/edge-host/lean` ships the lean one only.
 */
export function createSyncDurableObject<Env>(source: EdgeConfigSource<Env>): SyncDurableObjectClass<Env> {
  return syncObjectClass(source, (config) =>
    loadEdgeEngine(needsQueryEngine(config) ? engineModule : leanEngineModule),
  );
}
