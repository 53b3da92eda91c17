import { Command } from "commander";
import type { RunState } from "./command-action.js";
import { registerAdmin } from "./commands/admin.js";
import { registerBench } from "./commands/bench.js";
import { registerInit } from "./commands/init.js";
import { registerInspect } from "./commands/inspect.js";
import { registerMaintain } from "./commands/maintain.js";
import { registerServe } from "./commands/serve.js";
import { cliVersion } from "./version.js";

/** The `weir` command tree. Every command has `--help`; usage errors exit with code 2. */
export function buildProgram(state: RunState): Command {
  const program = new Command("weir")
    .description("weir sync server: serve, inspect, maintain, administer and benchmark namespaces")
    .version(cliVersion(), "-V, --version", "print the version")
    .helpOption("-h, --help", "show help")
    .showHelpAfterError("(run with --help for usage)")
    .exitOverride();
  registerInit(program, state);
  registerServe(program, state);
  registerInspect(program, state);
  registerMaintain(program, state);
  registerAdmin(program, state);
  registerBench(program, state);
  return program;
}
