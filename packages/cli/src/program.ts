import { Command } from "commander";
import type { RunState } from "./command-action.js";
import { registerAcceptLoss } from "./commands/accept-loss.js";
import { registerAdmin } from "./commands/admin.js";
import { registerBench } from "./commands/bench.js";
import { registerIngest } from "./commands/ingest.js";
import { registerInit } from "./commands/init.js";
import { registerInspect } from "./commands/inspect.js";
import { registerMaintain } from "./commands/maintain.js";
import { registerServe } from "./commands/serve.js";
import { registerUpstream } from "./commands/upstream.js";
import { cliVersion } from "./version.js";

/** The `weir` command tree. Every command has `--help`; usage errors exit with code 2. */
export function buildProgram(state: RunState): Command {
  const program = new Command("weir")
    .description(
      "weir sync server: serve, inspect, maintain, ingest into, administer and benchmark namespaces",
    )
    .version(cliVersion(), "-V, --version", "print the version")
    .helpOption("-h, --help", "show help")
    .showHelpAfterError("(run with --help for usage)")
    .exitOverride()
    .addHelpText(
      "after",
      `
Examples:
  weir init my-app                          scaffold weir.config.js and a serve script
  weir serve --port 4848                    run the server from ./weir.config.{ts,js}
  weir inspect .data/todo.sqlite            watermark, floor, clients, row counts
  weir maintain .data/todo.sqlite           prune, checkpoint, optimize (under the file's lease)
  weir accept-loss .data/todo.sqlite        start a damaged or lost namespace anew
  weir admin http://127.0.0.1:4848/todo status
  weir bench http://127.0.0.1:4848/todo --mode push --clients 32 --duration 10
  weir ingest .data/todo.sqlite --upstream http://127.0.0.1:4850 --config weir.config.js
  weir upstream postgres --database-url postgres://... --tables todo --tenant-column org_id --token $TOKEN

Exit codes: 0 ok, 1 failure, 2 usage error. Every command takes --help; most take --json.`,
    );
  registerInit(program, state);
  registerServe(program, state);
  registerInspect(program, state);
  registerMaintain(program, state);
  registerAcceptLoss(program, state);
  registerAdmin(program, state);
  registerBench(program, state);
  registerUpstream(program, state);
  registerIngest(program, state);
  return program;
}
