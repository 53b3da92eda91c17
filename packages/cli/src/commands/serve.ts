import type { WeirServer } from "@weir/node-host";
import type { Command } from "commander";
import { integerArg } from "../arguments.js";
import { CliError, EXIT_OK } from "../cli-error.js";
import { defineAction, type RunState } from "../command-action.js";
import { findConfigFile, loadConfigFile } from "../config-file.js";
import { hostOptions, type ServeFileOptions, type WorkerArgument } from "../serve-options.js";

interface ServeOptions extends ServeFileOptions {
  config?: string;
  port?: number;
  host?: string;
  workers?: number;
  json?: boolean;
}

/** Server settings a config file may carry beside the weir config itself. */
interface ServeFileSettings {
  port?: unknown;
  host?: unknown;
}

/** The port: the command line's, the config file's, PORT's, or weir's default. */
function choosePort(
  options: ServeOptions,
  config: ServeFileSettings,
  ports: Pick<typeof import("@weir/node-host"), "DEFAULT_PORT" | "isPort" | "portFromEnv">,
): number {
  if (options.port !== undefined) return options.port;
  if (config.port !== undefined) {
    if (!ports.isPort(config.port))
      throw new CliError("the config's port must be an integer 0..65535", "bad_config");
    return config.port;
  }
  try {
    return ports.portFromEnv() ?? ports.DEFAULT_PORT;
  } catch (error) {
    throw new CliError((error as Error).message, "bad_port");
  }
}

export function registerServe(program: Command, state: RunState): void {
  const command = program
    .command("serve")
    .description("run a weir sync server from a config file (stops cleanly on Ctrl-C or SIGTERM)")
    .option("--config <file>", "config file, .js/.mjs or .ts (default: weir.config.{ts,mts,js,mjs} here)")
    .option(
      "-p, --port <port>",
      "port to listen on; 0 picks a free one (default: config, PORT, 4848)",
      integerArg(0, 65535),
    )
    .option("--host <address>", "address to listen on (default: config, 127.0.0.1)")
    .option("--data-dir <dir>", "where the namespace databases live (default: config's dataDir, .data)")
    .option("--memory", "keep the databases in memory (lost when the server stops)")
    .option(
      "--workers <n>",
      "worker threads that run the namespaces; 0 runs them on the routing thread (default: config, one per core)",
      integerArg(0, 256),
    )
    .addHelpText(
      "after",
      `
The config file's default export is the server's options: schema, mutators, authentication
(jwt, authenticate or devAuth), visibility, adminKey, retainChanges, caps, dataDir, port, host,
workers. Each worker thread loads the config file again (a config's functions cannot cross threads).
--json prints one line {"url", "port", "dataDir", "config", "workers"} once listening.`,
    );
  defineAction(command, state, async (out, options: ServeOptions) => {
    const configPath = findConfigFile(options.config);
    const config = await loadConfigFile(configPath);
    const settings = config as ServeFileSettings;
    // The server and its dependencies load only for this command.
    const node = await import("@weir/node-host");
    const port = choosePort(options, settings, node);
    const host = options.host ?? (typeof settings.host === "string" ? settings.host : "127.0.0.1");
    const nodeOptions = hostOptions(config, configPath, options);
    if (options.workers !== undefined) nodeOptions.workers = options.workers;
    if (nodeOptions.workers !== 0) {
      nodeOptions.workerConfig = {
        module: new URL("./serve-worker-config.js", import.meta.url),
        argument: { configPath, dataDir: options.dataDir, memory: options.memory } satisfies WorkerArgument,
      };
    }
    const { createServer, untilStopped } = node;
    let server: WeirServer;
    try {
      server = createServer(nodeOptions);
    } catch (error) {
      throw new CliError((error as Error).message, "bad_config");
    }
    let listening: { url: string; port: number };
    try {
      listening = await server.listen({ port, host });
    } catch (error) {
      await server.close().catch(() => {});
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "EADDRINUSE") throw new CliError(`port ${port} on ${host} is in use`, "port_in_use");
      throw new CliError(`cannot start: ${(error as Error).message}`, "start_failed");
    }
    const dataDir = nodeOptions.storage === "memory" ? null : (nodeOptions.dataDir ?? null);
    const workers = server.workers;
    out.result({ url: listening.url, port: listening.port, dataDir, config: configPath, workers }, (value) =>
      [
        `weir listening on ${value.url}`,
        `  config:   ${value.config}`,
        `  data:     ${value.dataDir ?? "in memory (lost on stop)"}`,
        `  workers:  ${value.workers === 0 ? "none (namespaces run on the routing thread)" : `${value.workers} threads`}`,
        `  routes:   ${value.url}/<namespace>/pull, /push, /replicache/pull, /replicache/push, /wake`,
        "press Ctrl-C to stop",
      ].join("\n"),
    );
    await untilStopped(server, out.json ? () => {} : (line) => process.stderr.write(`${line}\n`));
    return EXIT_OK;
  });
}
