import type { Engine } from "@weir/engine-wasm";
import { namedQueryShapes } from "../config/query-shapes.js";
import type { ResolvedConfig } from "../config/weir-config.js";
import type { Logger } from "../ports/logger.js";
import type { NamespaceStore } from "../ports/storage.js";
import { ControlStore } from "./control-store.js";

/**
 * Installs what a namespace keeps in its database (the engine's schema and bookkeeping, the
 * host's control table), in the caller's transaction; logs the named queries left unindexed.
 */
export function installNamespace(
  engine: Engine,
  store: NamespaceStore,
  config: ResolvedConfig,
  logger: Logger,
  hash: string,
): void {
  const installed = engine.install(store.db, config.schema, { queries: namedQueryShapes(config) });
  ControlStore.create(store.db);
  for (const { name, message } of installed.unindexed ?? []) {
    logger.log("warn", { msg: "query not indexed at install", ns: hash, query: name, error: message });
  }
}
