import { CliError, EXIT_FAILURE } from "./cli-error.js";

/**
 * Where a command writes. Results go to stdout, human-readable by default or as one JSON
 * object with `--json`; notes and progress go to stderr so that stdout stays parseable.
 */
export class Output {
  constructor(
    readonly json: boolean,
    private readonly stdout: NodeJS.WritableStream = process.stdout,
    private readonly stderr: NodeJS.WritableStream & { isTTY?: boolean } = process.stderr,
  ) {}

  /** Prints a command's result: `value` as JSON, or the human text `render` makes of it. */
  result<T>(value: T, render: (value: T) => string): void {
    if (this.json) this.stdout.write(`${JSON.stringify(value)}\n`);
    else {
      const text = render(value);
      if (text) this.stdout.write(text.endsWith("\n") ? text : `${text}\n`);
    }
  }

  /** Prints one JSON line whatever the mode: the summary of a command made for schedulers. */
  summary(value: unknown): void {
    this.stdout.write(`${JSON.stringify(value)}\n`);
  }

  /** A human note on stderr (never in JSON mode, where stdout carries everything). */
  note(text: string): void {
    if (!this.json) this.stderr.write(`${text}\n`);
  }

  /** Whether a live progress line may be drawn: only on a terminal. */
  get interactive(): boolean {
    return this.stderr.isTTY === true;
  }

  get errorStream(): NodeJS.WritableStream {
    return this.stderr;
  }

  /** Reports a failure and answers the exit code for it. */
  failure(error: unknown): number {
    const cliError =
      error instanceof CliError
        ? error
        : new CliError(error instanceof Error ? error.message : String(error));
    if (this.json) {
      this.stdout.write(
        `${JSON.stringify({ error: cliError.code, message: cliError.message, ...cliError.details })}\n`,
      );
    } else {
      this.stderr.write(`weir: ${cliError.message}\n`);
      // An unexpected error is a bug: WEIR_DEBUG=1 shows where it came from.
      if (!(error instanceof CliError) && error instanceof Error && process.env.WEIR_DEBUG) {
        this.stderr.write(`${error.stack}\n`);
      }
    }
    return cliError instanceof CliError ? cliError.exitCode : EXIT_FAILURE;
  }
}
