import type { NodeHostOptions } from "@weir/node-host";
import { loadConfigFile } from "./config-file.js";
import { hostOptions, type WorkerArgument } from "./serve-options.js";

/**
 * The options a worker thread of `weir serve` runs with: the config file loaded again in that
 * thread, changed by the command line as in the routing thread (`dataDir` resolved from the
 * working directory the command was given in).
 */
export default async function serveWorkerConfig(argument: WorkerArgument): Promise<NodeHostOptions> {
  const config = await loadConfigFile(argument.configPath);
  return hostOptions(config, argument.configPath, argument);
}
