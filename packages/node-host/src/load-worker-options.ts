import { isAbsolute } from "node:path";
import { pathToFileURL } from "node:url";
import type { MessagePort } from "node:worker_threads";
import type { NodeHostOptions } from "./node-options.js";

/**
 * The options a worker thread serves with: the module's default export (or the module itself),
 * called with `argument` and this worker's `ports` when it is a function. A config's functions
 * cannot cross threads, so each worker loads them afresh.
 */
export async function loadWorkerOptions(
  module: string,
  argument: unknown,
  ports: Record<string, MessagePort> = {},
): Promise<NodeHostOptions> {
  const specifier = isAbsolute(module) ? pathToFileURL(module).href : module;
  const loaded = (await import(specifier)) as { default?: unknown };
  let options: unknown = loaded.default ?? loaded;
  if (typeof options === "function")
    options = await (options as (argument: unknown, ports: Record<string, MessagePort>) => unknown)(
      argument,
      ports,
    );
  if (options === null || typeof options !== "object") {
    throw new Error(
      `the worker config module ${module} must export the server's options (or a function answering them)`,
    );
  }
  return options as NodeHostOptions;
}
