import { existsSync, renameSync } from "node:fs";
import { basename, dirname, resolve } from "node:path";
import { CATALOG_FILE, NamespaceCatalog } from "@weir/node-host/catalog";
import { acquireLease, type Lease, LeaseHeldError } from "@weir/node-host/lease";
import type { Command } from "commander";
import { nonNegativeSecondsArg } from "../arguments.js";
import { CliError, EXIT_OK } from "../cli-error.js";
import { defineAction, type RunState } from "../command-action.js";
import { formatFields } from "../format.js";

interface AcceptLossOptions {
  wait: number;
  json?: boolean;
}

const NAMESPACE = /^[A-Za-z0-9_-]{1,64}$/;

export function registerAcceptLoss(program: Command, state: RunState): void {
  const command = program
    .command("accept-loss")
    .description(
      "accept that a namespace's data is lost: move its file aside and forget it, so the server starts it anew",
    )
    .argument("<db-file>", "the namespace's file, <dataDir>/<namespace>.sqlite (it may be missing)")
    .option(
      "--wait <seconds>",
      "how long to wait for a process holding the file's lease",
      nonNegativeSecondsArg,
      5,
    )
    .addHelpText(
      "after",
      `
A server refuses (503 namespace_unavailable) a namespace whose file is damaged, or that the
data directory's catalog (weir.catalog.sqlite) knows but whose file is missing or empty: it
never recreates such a namespace empty on its own, since its clients would be told to drop
their data. Restore the file from a backup, or run this command: the file (and its -wal and
-shm) is renamed <file>.lost-<time> and the catalog forgets the namespace. Its next request
creates it empty; clients that held its data get 409 and must drop their copy.`,
    );
  defineAction(command, state, async (out, options: AcceptLossOptions, given: string) => {
    const file = resolve(given);
    const namespace = basename(file, ".sqlite");
    if (!file.endsWith(".sqlite") || !NAMESPACE.test(namespace)) {
      throw new CliError(`${given} is not a namespace file (<dataDir>/<namespace>.sqlite)`, "not_namespace");
    }
    const dataDir = dirname(file);
    if (!existsSync(`${dataDir}/${CATALOG_FILE}`) && !existsSync(file)) {
      throw new CliError(`no namespace ${namespace} in ${dataDir}`, "not_found");
    }
    let lease: Lease;
    try {
      lease = await acquireLease(file, { command: `weir accept-loss ${given}`, waitMs: options.wait * 1000 });
    } catch (error) {
      if (error instanceof LeaseHeldError)
        throw new CliError(error.message, "lease_held", 1, { holder: error.holder });
      throw error;
    }
    try {
      const catalog = NamespaceCatalog.open(dataDir);
      try {
        const entry = catalog.entry(namespace);
        if (!entry && !existsSync(file))
          throw new CliError(`no namespace ${namespace} in ${dataDir}`, "not_found");
        const suffix = `.lost-${new Date().toISOString().replaceAll(":", "-")}`;
        const movedAside: string[] = [];
        for (const part of ["", "-wal", "-shm"]) {
          if (!existsSync(`${file}${part}`)) continue;
          renameSync(`${file}${part}`, `${file}${suffix}${part}`);
          movedAside.push(`${file}${suffix}${part}`);
        }
        catalog.forget(namespace);
        const report = { namespace, file, lastWatermark: entry?.watermark ?? null, movedAside };
        out.result(report, (value) =>
          formatFields({
            namespace: value.namespace,
            "last watermark":
              value.lastWatermark === null ? "unknown (not in the catalog)" : String(value.lastWatermark),
            "moved aside": value.movedAside.length > 0 ? value.movedAside.join(", ") : "nothing (no file)",
            next: "the namespace starts empty on its next request",
          }),
        );
        return EXIT_OK;
      } finally {
        catalog.close();
      }
    } finally {
      lease.release();
    }
  });
}
