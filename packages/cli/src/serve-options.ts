import { dirname, isAbsolute, resolve } from "node:path";
import type { NodeHostOptions } from "@weir/node-host";

/** What `weir serve`'s command line changes in a config file's options. */
export interface ServeFileOptions {
  dataDir?: string;
  memory?: boolean;
}

/** What a worker thread of `weir serve` is given to load the same options (serve-worker-config.ts). */
export interface WorkerArgument extends ServeFileOptions {
  configPath: string;
}

/**
 * The options for node-host: the config file's, with a relative `dataDir` taken from the
 * config's own folder, then the command line's on top (a relative `--data-dir` is from the
 * working directory, as any path typed in a shell).
 */
export function hostOptions(
  config: Record<string, unknown>,
  configPath: string,
  options: ServeFileOptions,
): NodeHostOptions {
  const { port: _port, host: _host, ...rest } = config;
  const merged = { ...rest } as unknown as NodeHostOptions;
  if (typeof merged.dataDir === "string" && !isAbsolute(merged.dataDir)) {
    merged.dataDir = resolve(dirname(configPath), merged.dataDir);
  }
  merged.dataDir ??= resolve(dirname(configPath), ".data");
  if (options.dataDir !== undefined) merged.dataDir = resolve(options.dataDir);
  if (options.memory) merged.storage = "memory";
  return merged;
}
