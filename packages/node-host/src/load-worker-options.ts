import { isAbsolute } from "node:path";
import { pathToFileURL } from "node:url";
import type { NodeHostOptions } from "./node-options.js";

/**
 * The options a worker thread serves with: the module's default export (or the module itself),
 * called with `argument` when it is a function. A config's functions cannot cross threads, so
 * each worker loads them afresh.
 */
export async function loadWorkerOptions(module: string, argument: unknown): Promise<NodeHostOptions> {
  const specifier = isAbsolute(module) ? pathToFileURL(module).href : module;
  const loaded = (await import(specifier)) as { default?: unknown };
  let options: unknown = loaded.default ?? loaded;
  if (typeof options === "function") options = await (options as (argument: unknown) => unknown)(argument);
  if (options === null || typeof options !== "object") {
    throw new Error(
      `the worker config module ${module} must export the server's options (or a function answering them)`,
    );
  }
  return options as NodeHostOptions;
}
