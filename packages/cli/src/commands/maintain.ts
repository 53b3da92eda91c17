import { existsSync } from "node:fs";
import { CONFIG_DEFAULTS } from "@weir/host-core";
import { acquireLease, type Lease, LeaseHeldError } from "@weir/node-host/lease";
import type { Command } from "commander";
import { integerArg, nonNegativeSecondsArg } from "../arguments.js";
import { ProgressLine } from "../bench/progress-line.js";
import { CliError, EXIT_OK } from "../cli-error.js";
import { defineAction, type RunState } from "../command-action.js";
import { findConfigFile, loadConfigFile } from "../config-file.js";
import { formatFields } from "../format.js";
import type { Output } from "../output.js";

/** The host's default retention, used when neither a flag, a stored knob nor a config names one. */
const DEFAULT_RETAIN_CHANGES = CONFIG_DEFAULTS.retainChanges;

interface MaintainOptions {
  retain?: number;
  config?: string;
  batchSize: number;
  maxBatches: number;
  scheduled?: boolean;
  wait: number;
  json?: boolean;
}

type RetentionSource = "flag" | "stored" | "config" | "default";

async function chooseRetention(
  options: MaintainOptions,
  stored: number | null,
): Promise<{ retainChanges: number; source: RetentionSource }> {
  if (options.retain !== undefined) return { retainChanges: options.retain, source: "flag" };
  if (stored !== null) return { retainChanges: stored, source: "stored" };
  if (options.config !== undefined) {
    const config = await loadConfigFile(findConfigFile(options.config));
    const retain = config.retainChanges;
    if (retain !== undefined) {
      if (typeof retain !== "number" || !Number.isSafeInteger(retain) || retain < 0) {
        throw new CliError("the config's retainChanges must be an integer >= 0", "bad_config");
      }
      return { retainChanges: retain, source: "config" };
    }
  }
  return { retainChanges: DEFAULT_RETAIN_CHANGES, source: "default" };
}

export function registerMaintain(program: Command, state: RunState): void {
  const command = program
    .command("maintain")
    .description(
      "prune the change log to the retention, checkpoint the WAL and optimize, under the file's lease",
    )
    .argument("<db-file>", "the namespace's SQLite file")
    .option(
      "--retain <changes>",
      "versions of the change log to keep (default: stored, then config, then 100,000)",
      integerArg(0),
    )
    .option("--config <file>", "read retainChanges from this config file")
    .option("--batch-size <n>", "changes deleted per transaction", integerArg(1), 1_000)
    .option(
      "--max-batches <n>",
      "stop after this many batches (run again when more is due)",
      integerArg(1),
      1_000,
    )
    .option("--wait <seconds>", "how long to wait for a running server's lease", nonNegativeSecondsArg, 5)
    .option("--scheduled", "a scheduled run: yield at once (exit 0) if another process holds the lease")
    .addHelpText(
      "after",
      `
The lease file <db-file>.lease names the process that writes the database. A running server
holds it: maintain waits --wait seconds for it, then refuses (exit 1) naming the holder;
with --scheduled it yields at once and exits 0. A lease left by a dead process is taken over.`,
    );
  defineAction(command, state, async (out, options: MaintainOptions, file: string) => {
    // Checked before the lease, whose file would otherwise be written beside a missing database.
    if (!existsSync(file)) throw new CliError(`no such database file: ${file}`, "not_found");
    let lease: Lease;
    try {
      lease = await acquireLease(file, {
        command: `weir maintain ${file}`,
        waitMs: options.wait * 1000,
        scheduled: options.scheduled === true,
      });
    } catch (error) {
      if (!(error instanceof LeaseHeldError)) throw error;
      if (options.scheduled) {
        out.result({ file, yielded: true, holder: error.holder }, () => `weir: ${error.message}`);
        return EXIT_OK;
      }
      throw new CliError(error.message, "lease_held", 1, { holder: error.holder });
    }
    try {
      return await maintain(out, options, file);
    } finally {
      lease.release();
    }
  });
}

async function maintain(out: Output, options: MaintainOptions, file: string) {
  const { openNamespaceFile } = await import("../namespace-file.js");
  const ns = await openNamespaceFile(file, { writable: true });
  try {
    const { retainChanges, source } = await chooseRetention(options, ns.storedRetention());
    const before = { ...ns.engine.state(ns.adapter), ...ns.sizes() };
    let batches = 0;
    let deleted = 0;
    let more = true;
    const progress = new ProgressLine(
      out.errorStream,
      () =>
        `maintain  batch ${batches}/${options.maxBatches}  deleted ${deleted.toLocaleString("en-US")} changes`,
    );
    if (!out.json) progress.start();
    const prune = ns.db.transaction(() => ns.engine.prune(ns.adapter, retainChanges, options.batchSize));
    try {
      while (more && batches < options.maxBatches) {
        const result = prune();
        batches++;
        deleted += result.deleted;
        more = result.more;
      }
    } finally {
      progress.stop();
    }
    const [checkpoint] = ns.db.pragma("wal_checkpoint(TRUNCATE)") as {
      busy: number;
      log: number;
      checkpointed: number;
    }[];
    ns.db.pragma("optimize");
    const after = { ...ns.engine.state(ns.adapter), ...ns.sizes() };
    const report = {
      file,
      retainChanges,
      retentionSource: source,
      batches,
      deleted,
      more,
      floor: { before: before.floor, after: after.floor },
      changes: { before: before.changes, after: after.changes },
      watermark: after.watermark,
      checkpoint: {
        busy: checkpoint?.busy === 1,
        walPages: checkpoint?.log ?? 0,
        checkpointed: checkpoint?.checkpointed ?? 0,
      },
      optimized: true,
      databaseBytes: { before: before.databaseBytes, after: after.databaseBytes },
      walBytes: { before: before.walBytes, after: after.walBytes },
    };
    out.result(report, (value) =>
      [
        formatFields({
          file: value.file,
          retainChanges: `${value.retainChanges.toLocaleString("en-US")} (${value.retentionSource})`,
          pruned: `${value.deleted.toLocaleString("en-US")} changes in ${value.batches} batches`,
          changes: `${value.changes.before.toLocaleString("en-US")} -> ${value.changes.after.toLocaleString("en-US")}`,
          floor: `${value.floor.before} -> ${value.floor.after} (watermark ${value.watermark})`,
          checkpoint: value.checkpoint.busy ? "busy (a reader holds the WAL; run again)" : "done",
          optimize: "done",
        }),
        value.more ? `more is due: run weir maintain again (or raise --max-batches)` : "nothing more is due",
      ].join("\n"),
    );
    return EXIT_OK;
  } finally {
    ns.close();
  }
}
