import leanEngineModule from "@weir/engine-wasm/engine-lean.wasm";
import type { EdgeConfigSource } from "./edge-config.js";
import { loadEdgeEngine, needsQueryEngine } from "./load-edge-engine.js";
import { type SyncDurableObjectClass, syncObjectClass } from "./sync-object-class.js";

/**
 * `createSyncDurableObject` of `@weir/edge-host/lean`: the Worker ships the lean engine only (no
 * query engine), so a config that names queries is refused when the object starts.
 */
export function createSyncDurableObject<Env>(source: EdgeConfigSource<Env>): SyncDurableObjectClass<Env> {
  return syncObjectClass(source, (config) => {
    if (needsQueryEngine(config)) {
      return Promise.reject(
        new Error(
          "the config names queries, which @weir/edge-host/lean cannot answer: import @weir/edge-host",
        ),
      );
    }
    return loadEdgeEngine(leanEngineModule);
  });
}
