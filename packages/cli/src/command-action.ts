import type { Command } from "commander";
import { EXIT_OK } from "./cli-error.js";
import { Output } from "./output.js";

/** Filled in by a command's action: the exit code the process ends with. */
export interface RunState {
  exitCode: number;
}

/**
 * Adds `--json` to a command and runs its action with an Output that matches it. Errors thrown
 * by the action are reported on that Output and turned into the exit code; a returned number
 * is the exit code.
 */
export function defineAction<A extends unknown[], O extends { json?: boolean }>(
  command: Command,
  state: RunState,
  action: (out: Output, options: O, ...args: A) => Promise<number | undefined> | number | undefined,
): Command {
  return command
    .option("--json", "print the result as one JSON object")
    .action(async (...params: unknown[]) => {
      // commander passes the positional arguments, then the options, then the command itself.
      const positional = params.slice(0, -2) as A;
      const options = params[params.length - 2] as O;
      const out = new Output(options.json === true);
      try {
        state.exitCode = (await action(out, options, ...positional)) ?? EXIT_OK;
      } catch (error) {
        state.exitCode = out.failure(error);
      }
    });
}
