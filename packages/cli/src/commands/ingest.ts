import { existsSync } from "node:fs";
import { acquireLease, type Lease, LeaseHeldError } from "@weir/node-host/lease";
import type { Command } from "commander";
import { InvalidArgumentError } from "commander";
import { integerArg, nonNegativeSecondsArg, secondsArg } from "../arguments.js";
import { CliError, EXIT_FAILURE, EXIT_OK } from "../cli-error.js";
import { defineAction, type RunState } from "../command-action.js";
import { findConfigFile, loadConfigFile } from "../config-file.js";
import { type IngestOptions, runIngestOnFile } from "../ingest-run.js";

/** Budgets of one pass when no flag names them (as a scheduled pass wants them: bounded). */
const INGEST_DEFAULTS = {
  maxRows: 100_000,
  maxBytes: 64 * 1024 * 1024,
  maxTimeSeconds: 120,
  retries: 3,
} as const;

function upstreamUrlArg(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new InvalidArgumentError("expected the upstream's base URL, such as http://127.0.0.1:4850");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new InvalidArgumentError("expected an http:// or https:// URL");
  }
  return url;
}

export function registerIngest(program: Command, state: RunState): void {
  const command = program
    .command("ingest")
    .description(
      "one bounded ingest pass from an upstream into a namespace's SQLite file, under the file's lease",
    )
    .argument("<db-file>", "the namespace's SQLite file (created with --config's schema if missing)")
    .requiredOption(
      "--upstream <url>",
      "the upstream's base URL (GET <url>/changes, <url>/snapshot)",
      upstreamUrlArg,
    )
    .option("--token <token>", "bearer token for the upstream (default: WEIR_UPSTREAM_TOKEN)")
    .option("--config <file>", "a weir config: its schema (else the one the file records) and upstream knobs")
    .option(
      "--max-rows <n>",
      "stop between batches once this many rows were ingested",
      integerArg(1),
      INGEST_DEFAULTS.maxRows,
    )
    .option(
      "--max-bytes <n>",
      "stop once the upstream's answers came to this many bytes",
      integerArg(1),
      INGEST_DEFAULTS.maxBytes,
    )
    .option("--max-time <seconds>", "wall time the pass may take", secondsArg, INGEST_DEFAULTS.maxTimeSeconds)
    .option(
      "--retries <n>",
      "retries of a failing upstream call (429, 5xx, unreachable) before the pass stops",
      integerArg(0, 100),
      INGEST_DEFAULTS.retries,
    )
    .option("--changes-limit <n>", "changes asked per call (default: config, 1,000)", integerArg(1, 100_000))
    .option("--page-rows <n>", "rows per snapshot page (default: config, 2,000)", integerArg(100, 100_000))
    .option("--resnapshot", "build a new snapshot generation even though the cursor is current")
    .option("--wait <seconds>", "how long to wait for a running server's lease", nonNegativeSecondsArg, 5)
    .option("--scheduled", "a scheduled run: yield at once (exit 0, outcome lease_busy) if the lease is held")
    .addHelpText(
      "after",
      `
stdout gets one JSON summary: outcome (complete, pending_budget, pending_retry,
wall_budget_exceeded, lease_busy), rows, bytes, batches, cursor { before, after }, attempts,
elapsedMs. Every step is stored as it commits, so a pass stopped by a budget, a failing upstream
or Ctrl-C resumes where it was on the next run. Exit 0 for complete, pending_budget,
wall_budget_exceeded and lease_busy; 1 for pending_retry (the upstream failed) and errors.

The lease file <db-file>.lease names the process that writes the database. A running server
holds it: ingest waits --wait seconds, then refuses (exit 1) naming the holder; with --scheduled
it yields at once. Progress goes to stderr on a terminal.

Examples:
  weir ingest .data/todo.sqlite --upstream http://127.0.0.1:4850 --config weir.config.mjs
  weir ingest .data/todo.sqlite --upstream http://127.0.0.1:4850/todo --max-rows 10000 --scheduled`,
    );
  defineAction(command, state, async (out, options: IngestOptions, file: string) => {
    const configPath = options.config === undefined ? undefined : findConfigFile(options.config);
    const config = configPath === undefined ? undefined : await loadConfigFile(configPath);
    // Checked before the lease, whose file would otherwise be written beside a missing database.
    if (!existsSync(file) && config === undefined) {
      throw new CliError(
        `no such database file: ${file} (pass --config with the app's schema to create it)`,
        "not_found",
      );
    }
    let lease: Lease;
    try {
      lease = await acquireLease(file, {
        command: `weir ingest ${file}`,
        waitMs: options.wait * 1000,
        scheduled: options.scheduled === true,
      });
    } catch (error) {
      if (!(error instanceof LeaseHeldError)) throw error;
      if (options.scheduled) {
        const summary = { file, outcome: "lease_busy", rows: 0, bytes: 0, attempts: 0, holder: error.holder };
        out.summary(summary);
        out.note(`weir: ${error.message}`);
        return EXIT_OK;
      }
      throw new CliError(error.message, "lease_held", EXIT_FAILURE, { holder: error.holder });
    }
    try {
      return await runIngestOnFile(
        out,
        options,
        file,
        config === undefined ? undefined : { config, path: configPath! },
      );
    } finally {
      lease.release();
    }
  });
}
