import { CommanderError } from "commander";
import { EXIT_OK, EXIT_USAGE } from "./cli-error.js";
import { buildProgram } from "./program.js";

/** Runs `weir` with Node-style argv (`[node, script, ...args]`) and answers the exit code. */
export async function run(argv: readonly string[]): Promise<number> {
  const state = { exitCode: EXIT_OK };
  const program = buildProgram(state);
  try {
    await program.parseAsync([...argv]);
  } catch (error) {
    // --help and --version end through here with exit code 0; everything else the parser
    // throws (unknown option, missing argument, bad value, no command) is a usage error.
    if (error instanceof CommanderError) return error.exitCode === 0 ? EXIT_OK : EXIT_USAGE;
    throw error;
  }
  return state.exitCode;
}
