import type { TableIndex } from "@weir/engine-wasm";
import type { Command } from "commander";
import { integerArg } from "../arguments.js";
import { UsageError } from "../cli-error.js";
import { defineAction, type RunState } from "../command-action.js";
import { formatFields, formatTable } from "../format.js";

interface InspectOptions {
  since: number;
  limit: number;
  json?: boolean;
}

/** Where an index comes from, in the human view: the query that asked for it, or the app. */
function from(index: TableIndex): string {
  if (!index.derived) return "app";
  return index.query === null ? "derived from a query" : `query ${index.query}`;
}

/** Clients shown in the human view; `--json` lists all. */
const HUMAN_CLIENT_LIMIT = 20;

export function registerInspect(program: Command, state: RunState): void {
  const command = program
    .command("inspect")
    .description("read a namespace database file directly (no server): state, clients, tables, changes")
    .argument("<db-file>", "the namespace's SQLite file, as in .data/todo.sqlite")
    .argument("[view]", '"changes" to list the change log')
    .option("--since <version>", "changes after this version (with changes)", integerArg(0), 0)
    .option("--limit <n>", "at most this many changes (with changes)", integerArg(1, 1_000_000), 100)
    .addHelpText(
      "after",
      "\nExamples:\n  weir inspect .data/todo.sqlite\n  weir inspect .data/todo.sqlite changes --since 120 --limit 50 --json",
    );
  defineAction(command, state, async (out, options: InspectOptions, file: string, view?: string) => {
    if (view !== undefined && view !== "changes")
      throw new UsageError(`unknown view "${view}"; try: changes`);
    const { openNamespaceFile, quoteIdent } = await import("../namespace-file.js");
    const ns = await openNamespaceFile(file, { writable: false });
    try {
      if (view === "changes") {
        const changes = ns.engine.listChanges(ns.adapter, options.since, options.limit);
        const watermark = ns.engine.state(ns.adapter).watermark;
        out.result({ file, since: options.since, watermark, changes }, (value) =>
          value.changes.length === 0
            ? `no changes after version ${value.since} (watermark ${value.watermark})`
            : formatTable(
                ["version", "table", "key"],
                value.changes.map((change) => [change.version, change.table, JSON.stringify(change.key)]),
              ),
        );
        return undefined;
      }
      const engineState = ns.engine.state(ns.adapter);
      const clients = ns.engine.clients(ns.adapter);
      const tables: Record<string, number> = {};
      for (const table of ns.appTables()) {
        tables[table] = ns.db
          .prepare(`SELECT count(*) FROM ${quoteIdent(table)}`)
          .pluck()
          .get() as number;
      }
      const { tableIndexes } = await import("@weir/engine-wasm");
      const report = {
        file,
        ...engineState,
        retainChanges: ns.storedRetention(),
        ...ns.sizes(),
        tables,
        indexes: tableIndexes(ns.adapter),
        clientList: clients,
      };
      out.result(report, (value) => {
        const { clientList, tables: counts, retainChanges, indexes, ...summary } = value;
        const shown = clientList.slice(0, HUMAN_CLIENT_LIMIT);
        return [
          formatFields({ ...summary, retainChanges: retainChanges ?? "config default" }),
          "",
          Object.keys(counts).length
            ? formatTable(["table", "rows"], Object.entries(counts))
            : "no app tables",
          "",
          indexes.length
            ? formatTable(
                ["index", "table", "columns", "from"],
                indexes.map((i) => [i.name, i.table, i.columns, from(i)]),
              )
            : "no indexes on app tables",
          "",
          clientList.length
            ? formatTable(
                ["client", "group", "user", "last id"],
                shown.map((c) => [c.clientID, c.clientGroupID, c.userID, c.lastMutationID]),
              ) +
              (clientList.length > shown.length
                ? `\n... ${clientList.length - shown.length} more (--json lists all)`
                : "")
            : "no clients",
        ].join("\n");
      });
      return undefined;
    } finally {
      ns.close();
    }
  });
}
