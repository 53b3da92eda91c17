/** Exit codes the `weir` command answers with. */
export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

/**
 * A failure the command reports as one clear message (no stack trace). `code` is a short
 * machine-readable name that `--json` output carries; `details` adds fields to that output.
 */
export class CliError extends Error {
  override readonly name = "CliError";
  constructor(
    message: string,
    readonly code = "failed",
    readonly exitCode: number = EXIT_FAILURE,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

/** Wrong arguments: exit code 2, like the parser's own usage errors. */
export class UsageError extends CliError {
  constructor(message: string) {
    super(message, "usage", EXIT_USAGE);
  }
}
