import { resolve } from "node:path";
import type { ListedColumn } from "@weir/postgres";
import type { Command } from "commander";
import { integerArg } from "../arguments.js";
import { CliError, EXIT_OK, UsageError } from "../cli-error.js";
import { defineAction, type RunState } from "../command-action.js";

const DEFAULT_PORT = 4849;

interface UpstreamPostgresOptions {
  databaseUrl?: string;
  port?: number;
  host: string;
  buffer: string;
  token?: string;
  tables?: string;
  tenantColumn?: string;
  slot: string;
  publication: string;
  schema: string;
  retainChanges?: number;
  retainHours?: number;
  notifyUrl?: string;
  notifyToken?: string;
  setReplicaIdentity?: boolean;
  drop?: boolean;
  listColumns?: boolean;
  json?: boolean;
}

function listArg(text: string): string {
  if (text.split(",").some((part) => part.trim() === ""))
    throw new UsageError("expected names separated by commas");
  return text;
}

function names(text: string): string[] {
  return listArg(text)
    .split(",")
    .map((name) => name.trim());
}

/** One block per table: each column's PostgreSQL type, weir type, and what else matters. */
function columnsText(tables: Record<string, ListedColumn[]>): string {
  const blocks = Object.entries(tables).map(([table, columns]) => {
    const width = Math.max(...columns.map((column) => column.name.length));
    const lines = columns.map((column) => {
      const notes = [
        column.primaryKey ? "primary key" : column.nullable ? "nullable" : "",
        column.generated ? "generated: not sent" : "",
        column.weirType === null ? "not supported: leave it out with a column list" : "",
      ].filter(Boolean);
      return `  ${column.name.padEnd(width)}  ${(column.weirType ?? "-").padEnd(7)}  ${column.type}${notes.length > 0 ? `  (${notes.join("; ")})` : ""}`;
    });
    return [table, ...lines].join("\n");
  });
  return blocks.length > 0 ? blocks.join("\n\n") : "no tables";
}

export function registerUpstream(program: Command, state: RunState): void {
  const upstream = program.command("upstream").description("serve weir's upstream contract from a database");
  const command = upstream
    .command("postgres")
    .description(
      "follow a PostgreSQL database through logical replication and serve /<namespace>/changes and /snapshot",
    )
    .option("--database-url <url>", "PostgreSQL connection URL (default: DATABASE_URL)")
    .option("--tables <names>", "the tables to follow, separated by commas")
    .option("--tenant-column <column>", "the column whose value names a row's namespace")
    .option(
      "-p, --port <port>",
      `port to listen on; 0 picks a free one (default ${DEFAULT_PORT})`,
      integerArg(0, 65535),
    )
    .option("--host <address>", "address to listen on", "127.0.0.1")
    .option("--buffer <file>", "the change buffer's SQLite file", "weir-upstream.sqlite")
    .option("--token <token>", "bearer token every request must carry (default: WEIR_UPSTREAM_TOKEN)")
    .option("--slot <name>", "replication slot", "weir")
    .option("--publication <name>", "publication", "weir")
    .option("--schema <name>", "the tables' schema", "public")
    .option("--retain-changes <n>", "changes the buffer keeps (default 1,000,000)", integerArg(0))
    .option("--retain-hours <n>", "hours the buffer keeps a change (default 24)", integerArg(0))
    .option("--notify-url <url>", "weir's base URL: POST <url>/<namespace>/notify after each commit")
    .option("--notify-token <token>", "bearer token for notify calls (default: WEIR_NOTIFY_TOKEN)")
    .option(
      "--set-replica-identity",
      "set REPLICA IDENTITY FULL on tables that lack it instead of refusing them",
    )
    .option("--drop", "drop the slot and the publication, then exit")
    .option(
      "--list-columns",
      "list each table's columns with the weir type each takes (--tables, or every table of --schema), then exit",
    )
    .addHelpText(
      "after",
      `
Creates the publication and the slot when absent; only --drop removes them (a slot keeps WAL on
the server until dropped). Stops cleanly on Ctrl-C or SIGTERM. State changes (connected,
reconnecting, drift, slot or buffer reset, stopped) are logged to stderr as JSON lines.
--json prints one line {"url", "port", "slot", "publication", "buffer", "tables"} once streaming.`,
    );
  defineAction(command, state, async (out, options: UpstreamPostgresOptions) => {
    const databaseUrl = options.databaseUrl ?? process.env.DATABASE_URL;
    if (!databaseUrl) throw new UsageError("pass --database-url or set DATABASE_URL");
    const postgres = await import("@weir/postgres");
    if (options.drop) {
      let dropped: { slot: boolean; publication: boolean };
      try {
        dropped = await postgres.dropReplication({
          databaseUrl,
          slot: options.slot,
          publication: options.publication,
        });
      } catch (error) {
        throw new CliError((error as Error).message, "drop_failed");
      }
      out.result({ dropped }, ({ dropped: d }) =>
        [
          `slot ${options.slot}: ${d.slot ? "dropped" : "absent"}`,
          `publication ${options.publication}: ${d.publication ? "dropped" : "absent"}`,
        ].join("\n"),
      );
      return EXIT_OK;
    }
    if (options.listColumns) {
      let listed: Awaited<ReturnType<typeof postgres.listColumns>>;
      try {
        listed = await postgres.listColumns({
          databaseUrl,
          schema: options.schema,
          ...(options.tables ? { tables: names(options.tables) } : {}),
        });
      } catch (error) {
        throw new CliError((error as Error).message, "list_failed");
      }
      out.result({ tables: listed }, ({ tables }) => columnsText(tables));
      return EXIT_OK;
    }
    if (!options.tables) throw new UsageError("pass --tables, the tables to follow");
    const tables = names(options.tables);
    const token = options.token ?? process.env.WEIR_UPSTREAM_TOKEN;
    const notifyToken = options.notifyToken ?? process.env.WEIR_NOTIFY_TOKEN;
    const buffer = resolve(options.buffer);
    // Loaded before the address is announced, so that a signal right after it is handled.
    const { jsonLineLogger, untilStopped } = await import("@weir/node-host");
    const logger = jsonLineLogger(process.stderr, process.stderr);
    let source: Awaited<ReturnType<typeof postgres.postgresUpstream>>;
    try {
      source = await postgres.postgresUpstream({
        databaseUrl,
        tables,
        tenant: options.tenantColumn ? { column: options.tenantColumn } : undefined,
        slot: options.slot,
        publication: options.publication,
        schema: options.schema,
        bufferFile: buffer,
        retention: {
          ...(options.retainChanges !== undefined ? { maxChanges: options.retainChanges } : {}),
          ...(options.retainHours !== undefined ? { maxAgeMs: options.retainHours * 3_600_000 } : {}),
        },
        notify: options.notifyUrl ? { url: options.notifyUrl, token: notifyToken } : undefined,
        setReplicaIdentity: options.setReplicaIdentity === true,
        // stdout carries the start line (--json): the log goes to stderr.
        logger,
      });
    } catch (error) {
      throw new CliError((error as Error).message, "upstream_failed");
    }
    const server = postgres.serveUpstream(source, { token });
    const port = options.port ?? DEFAULT_PORT;
    let listening: { url: string; port: number };
    try {
      listening = await server.listen({ port, host: options.host });
    } catch (error) {
      await source.close();
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "EADDRINUSE")
        throw new CliError(`port ${port} on ${options.host} is in use`, "port_in_use");
      throw new CliError(`cannot start: ${(error as Error).message}`, "start_failed");
    }
    // Rows no namespace can ever ask for: said at start, and counted in /status since.
    const { tenants } = await source.status();
    const unservable =
      tenants.unservableRows !== null && tenants.unservableRows > 0
        ? `  warning:  ${tenants.unservableRows} rows have a tenant value that is no namespace name (${tenants.examples
            .map((example) => JSON.stringify(example))
            .join(", ")}): no namespace can be served them (see /status, tenants)`
        : "";
    out.result(
      {
        url: listening.url,
        port: listening.port,
        slot: options.slot,
        publication: options.publication,
        buffer,
        tables,
        unservableTenantRows: tenants.unservableRows ?? 0,
      },
      (value) =>
        [
          `weir upstream listening on ${value.url}`,
          `  slot:     ${value.slot} (publication ${value.publication})`,
          `  buffer:   ${value.buffer}`,
          `  tables:   ${value.tables.join(", ")}`,
          `  routes:   ${value.url}/<namespace>/changes, /<namespace>/snapshot, /status, /metrics`,
          token ? "" : "  warning:  no --token: anyone who reaches the port reads every row",
          unservable,
          "press Ctrl-C to stop",
        ]
          .filter(Boolean)
          .join("\n"),
    );
    await untilStopped(
      {
        async close() {
          await server.close();
          await source.close();
          logger.flush();
        },
      },
      out.json ? () => {} : (line) => process.stderr.write(`${line}\n`),
    );
    return EXIT_OK;
  });
}
