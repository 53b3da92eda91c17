import type { Schema, Visibility } from "@weir/engine-wasm";
import * as v from "valibot";
import type { Claims } from "./claims.js";
import type { AuthRequest } from "./http-parts.js";
import type { Mutator } from "./mutator.js";
import { type QuotaConfig, QuotaConfigShape, type ResolvedQuotas, resolveQuotas } from "./quota-config.js";

export interface WeirConfig {
  /** The tables a namespace syncs. */
  schema: Schema;
  /** Named synchronous mutators, `(tx, args, ctx) => void`. */
  mutators: Record<string, Mutator>;
  /** Claims for a request (its method, URL and headers), or null to answer 401. */
  authenticate(request: AuthRequest): Claims | null | Promise<Claims | null>;
  /** Which rows these claims may see, by table. Without it every row is visible. */
  visibility?(claims: Claims): Visibility;
  /** Caps on one pull's changes. Defaults 10,000 rows and 2,000,000 bytes. */
  maxChangeRows?: number;
  maxChangeBytes?: number;
  /** How many versions of the change log to keep (default 100,000); older cookies reset. */
  retainChanges?: number;
  /** Wake coalescing window: at most one `wake` per socket per window (default 20 ms). */
  wakeWindowMs?: number;
  /** The `x-admin-key` that opens the admin routes. */
  adminKey?: string;
  /** Or a check of your own; admin routes are closed when neither is set. */
  isAdmin?(request: AuthRequest): boolean | Promise<boolean>;
  /** Largest request body accepted (default 4 MiB); beyond it 413. */
  maxBodyBytes?: number;
  /**
   * Whether these claims may use this namespace (pull, push, wake): false answers 403. Called
   * before the namespace is opened or created. Default: every namespace is open to everyone.
   */
  authorizeNamespace?(claims: Claims, namespace: string): boolean | Promise<boolean>;
  /** Namespaces open at once (default 1,000); at the cap the least recently used idle one closes. */
  maxOpenNamespaces?: number;
  /** Per-user budgets of requests and of new namespaces (see QuotaConfig). */
  quotas?: QuotaConfig;
}

export interface ResolvedConfig extends Omit<WeirConfig, "quotas"> {
  maxChangeRows: number;
  maxChangeBytes: number;
  retainChanges: number;
  wakeWindowMs: number;
  maxBodyBytes: number;
  maxOpenNamespaces: number;
  quotas: ResolvedQuotas;
}

export const CONFIG_DEFAULTS = {
  maxChangeRows: 10_000,
  maxChangeBytes: 2_000_000,
  retainChanges: 100_000,
  wakeWindowMs: 20,
  maxBodyBytes: 4 * 1024 * 1024,
  maxOpenNamespaces: 1_000,
} as const;

/** A config that cannot run; its message lists every problem, one per line. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConfigError";
  }
}

const Identifier = v.pipe(
  v.string(),
  v.regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "a name must match [A-Za-z_][A-Za-z0-9_]*"),
  v.check((name) => !name.toLowerCase().startsWith("_weir"), "names starting with _weir are reserved"),
);
const ColumnType = v.picklist(["string", "number", "integer", "boolean", "json", "bytes"]);
const Column = v.union(
  [ColumnType, v.strictObject({ type: ColumnType, nullable: v.optional(v.boolean()) })],
  'a column is a type ("string", "number", "integer", "boolean", "json", "bytes") or { type, nullable }',
);
const Table = v.pipe(
  v.strictObject({
    columns: v.pipe(
      v.record(Identifier, Column),
      v.check((columns) => Object.keys(columns).length > 0, "a table needs at least one column"),
    ),
    primaryKey: v.pipe(v.array(Identifier), v.minLength(1, "a table needs a primary key")),
  }),
  v.check(
    (table) => table.primaryKey.every((key) => key in table.columns),
    "every primary key column must be a declared column",
  ),
);
const SchemaShape = v.strictObject({
  tables: v.pipe(
    v.record(Identifier, Table),
    v.check((tables) => Object.keys(tables).length > 0, "the schema needs at least one table"),
  ),
});

const SyncFunction = v.pipe(
  v.function("expected a function"),
  v.check(
    (fn) => (fn as { constructor?: { name?: string } }).constructor?.name !== "AsyncFunction",
    "mutators must be synchronous (SQLite transactions are): remove `async` and queue async effects with tx.defer",
  ),
);
const Count = (min: number) =>
  v.optional(v.pipe(v.number(), v.safeInteger("expected an integer"), v.minValue(min)));

const ConfigShape = v.object({
  schema: SchemaShape,
  mutators: v.record(v.pipe(v.string(), v.minLength(1), v.maxLength(128)), SyncFunction),
  authenticate: v.function("authenticate(request) must be a function answering claims or null"),
  visibility: v.optional(v.function("visibility(claims) must be a function")),
  maxChangeRows: Count(1),
  maxChangeBytes: Count(1),
  retainChanges: Count(0),
  wakeWindowMs: Count(0),
  adminKey: v.optional(v.pipe(v.string(), v.minLength(8, "adminKey must be at least 8 characters"))),
  isAdmin: v.optional(v.function("isAdmin(request) must be a function")),
  maxBodyBytes: Count(1024),
  authorizeNamespace: v.optional(v.function("authorizeNamespace(claims, namespace) must be a function")),
  maxOpenNamespaces: Count(1),
  quotas: v.optional(QuotaConfigShape),
});

/** Checks a config and fills its defaults; throws a ConfigError naming every problem. */
export function resolveConfig(config: WeirConfig): ResolvedConfig {
  const result = v.safeParse(ConfigShape, config);
  if (!result.success) {
    const lines = result.issues.map((issue) => {
      const path = issue.path?.map((item) => String(item.key)).join(".");
      return ` - ${path ? `${path}: ` : ""}${issue.message}`;
    });
    throw new ConfigError(`invalid weir config:\n${lines.join("\n")}`);
  }
  return {
    ...config,
    maxChangeRows: config.maxChangeRows ?? CONFIG_DEFAULTS.maxChangeRows,
    maxChangeBytes: config.maxChangeBytes ?? CONFIG_DEFAULTS.maxChangeBytes,
    retainChanges: config.retainChanges ?? CONFIG_DEFAULTS.retainChanges,
    wakeWindowMs: config.wakeWindowMs ?? CONFIG_DEFAULTS.wakeWindowMs,
    maxBodyBytes: config.maxBodyBytes ?? CONFIG_DEFAULTS.maxBodyBytes,
    maxOpenNamespaces: config.maxOpenNamespaces ?? CONFIG_DEFAULTS.maxOpenNamespaces,
    quotas: resolveQuotas(config.quotas),
  };
}
