import * as v from "valibot";
import type { Logger } from "./logger.js";

const Identifier = v.pipe(v.string(), v.minLength(1), v.maxLength(63));

const TableOptions = v.strictObject({
  /** The columns sent (a subset); all of the table's columns when absent. */
  columns: v.optional(v.pipe(v.array(Identifier), v.minLength(1))),
  /** This table's tenant column, or null for a table every namespace receives whole. */
  tenantColumn: v.optional(v.nullable(Identifier)),
});
export type TableOptions = v.InferOutput<typeof TableOptions>;

const NonNegative = v.pipe(v.number(), v.safeInteger(), v.minValue(0));

/** The options of `postgresUpstream` (see the README for each one's meaning and default). */
export const PostgresUpstreamOptions = v.strictObject({
  databaseUrl: v.pipe(v.string(), v.minLength(1)),
  publication: v.optional(Identifier, "weir"),
  slot: v.optional(
    v.pipe(Identifier, v.regex(/^[a-z0-9_]+$/, "slot names are lower case, digits and _")),
    "weir",
  ),
  /** The PostgreSQL schema the tables live in. */
  schema: v.optional(Identifier, "public"),
  tables: v.union([
    v.pipe(v.array(Identifier), v.minLength(1)),
    v.pipe(
      v.record(Identifier, TableOptions),
      v.check((tables) => Object.keys(tables).length > 0, "name at least one table"),
    ),
  ]),
  tenant: v.optional(v.strictObject({ column: Identifier })),
  bufferFile: v.pipe(v.string(), v.minLength(1)),
  retention: v.optional(
    v.strictObject({ maxAgeMs: v.optional(NonNegative), maxChanges: v.optional(NonNegative) }),
    {},
  ),
  /** Namespaces to wake for changes that reach every namespace (no tenant, shared tables, TRUNCATE). */
  namespaces: v.optional(v.array(v.pipe(v.string(), v.minLength(1))), []),
  notify: v.optional(
    v.strictObject({
      url: v.pipe(v.string(), v.url()),
      token: v.optional(v.string()),
      timeoutMs: v.optional(v.pipe(v.number(), v.minValue(1))),
    }),
  ),
  onCommit: v.optional(
    v.custom<(namespaces: string[], watermark: bigint) => void>((f) => typeof f === "function"),
  ),
  /** Run `ALTER TABLE ... REPLICA IDENTITY FULL` on tables that lack it, instead of refusing them. */
  setReplicaIdentity: v.optional(v.boolean(), false),
  /** How often the reader confirms its position to PostgreSQL while nothing else is sent. */
  statusIntervalMs: v.optional(v.pipe(v.number(), v.minValue(100)), 10_000),
  /** Where state changes are logged (connected, reconnecting, drift, resets, errors); none by default. */
  logger: v.optional(
    v.custom<Logger>(
      (value) => typeof value === "object" && value !== null && typeof (value as Logger).log === "function",
      "logger must have a log(level, fields) method",
    ),
  ),
  /**
   * Run the reader (decoding, the buffer's writes and the contract's reads) in a worker thread of
   * its own, so that a burst of writes in PostgreSQL never holds the caller's event loop. The
   * upstream answers the same either way; `onCommit` and `logger` are called on the caller's
   * thread. Default true.
   */
  thread: v.optional(v.boolean(), true),
  /** Jitter source for the retry delays (tests pin it; needs `thread: false`, a function cannot cross threads). */
  random: v.optional(v.custom<() => number>((f) => typeof f === "function")),
});
export type PostgresUpstreamOptions = v.InferInput<typeof PostgresUpstreamOptions>;
export type ResolvedOptions = v.InferOutput<typeof PostgresUpstreamOptions>;

/** Changes kept by default: the newest million, and none older than a day. */
export const DEFAULT_RETENTION = { maxAgeMs: 24 * 60 * 60 * 1000, maxChanges: 1_000_000 };

/** Checks the options; throws one error naming every bad field. */
export function resolveOptions(options: PostgresUpstreamOptions): ResolvedOptions {
  const result = v.safeParse(PostgresUpstreamOptions, options);
  if (result.success && result.output.thread && result.output.random) {
    throw new Error(
      "invalid postgresUpstream options: random: needs thread: false (a function cannot cross threads)",
    );
  }
  if (result.success) return result.output;
  const problems = result.issues.map((issue) => {
    const path = issue.path?.map((item) => String(item.key)).join(".");
    return path ? `${path}: ${issue.message}` : issue.message;
  });
  throw new Error(`invalid postgresUpstream options: ${problems.join("; ")}`);
}

/** Each configured table with its own options, tenant column defaulted from `tenant`. */
export function tableOptions(options: ResolvedOptions): Map<string, TableOptions> {
  const entries: [string, TableOptions][] = Array.isArray(options.tables)
    ? options.tables.map((name) => [name, {}])
    : Object.entries(options.tables);
  return new Map(
    entries.map(([name, table]) => [
      name,
      {
        columns: table.columns,
        // An explicit null marks a shared table even when a tenant column is set for the rest.
        tenantColumn:
          table.tenantColumn === undefined ? (options.tenant?.column ?? null) : table.tenantColumn,
      },
    ]),
  );
}
