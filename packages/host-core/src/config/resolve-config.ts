import { schemaProblems } from "@weir/engine-wasm";
import * as v from "valibot";
import { MutateConfigShape, resolveMutate } from "../delegate/mutate-config.js";
import { resolveUpstream, UpstreamConfigShape } from "../ingest/upstream-config.js";
import { CONFIG_DEFAULTS } from "./config-defaults.js";
import { ConfigError } from "./config-error.js";
import { QuotaConfigShape, resolveQuotas } from "./quota-config.js";
import type { ResolvedConfig, WeirConfig } from "./weir-config.js";

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
  // The schema's own rules are the engine's (schemaProblems).
  schema: v.unknown(),
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
  upstream: v.optional(UpstreamConfigShape),
  mutate: v.optional(MutateConfigShape),
  queries: v.optional(
    v.record(
      v.pipe(v.string(), v.minLength(1), v.maxLength(128)),
      v.function("a query must be a function (args, claims) => ast"),
    ),
  ),
  queryIndexArgs: v.optional(
    v.record(v.string(), v.array(v.unknown(), "queryIndexArgs: each query's args must be a list")),
  ),
  tolerateUnknownQueries: v.optional(v.boolean()),
  maxQueryRows: Count(1),
  queryBudgetMs: Count(1),
  queryTotalBudgetMs: Count(1),
  querySliceMs: Count(1),
  queryPageMs: Count(0),
  queryAnswerMs: Count(0),
  pushSliceMs: Count(0),
  maxGroupQueries: Count(1),
  maxGroupQueryBytes: Count(1),
  queryTransformVersion: v.optional(
    v.union([v.number(), v.function()], "queryTransformVersion must be a number or a function of claims"),
  ),
});

/** Checks a config and fills its defaults; throws a ConfigError naming every problem. */
export function resolveConfig(config: WeirConfig): ResolvedConfig {
  const result = v.safeParse(ConfigShape, config);
  const problems = result.success
    ? []
    : result.issues.map((issue) => {
        const path = issue.path?.map((item) => String(item.key)).join(".");
        return `${path ? `${path}: ` : ""}${issue.message}`;
      });
  problems.push(...schemaProblems(config.schema));
  if (config.mutate && !config.upstream) {
    problems.push("mutate: delegated push needs an upstream (the app's writes come back through it)");
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return {
    ...config,
    maxChangeRows: config.maxChangeRows ?? CONFIG_DEFAULTS.maxChangeRows,
    maxChangeBytes: config.maxChangeBytes ?? CONFIG_DEFAULTS.maxChangeBytes,
    retainChanges: config.retainChanges ?? CONFIG_DEFAULTS.retainChanges,
    wakeWindowMs: config.wakeWindowMs ?? CONFIG_DEFAULTS.wakeWindowMs,
    maxBodyBytes: config.maxBodyBytes ?? CONFIG_DEFAULTS.maxBodyBytes,
    maxOpenNamespaces: config.maxOpenNamespaces ?? CONFIG_DEFAULTS.maxOpenNamespaces,
    quotas: resolveQuotas(config.quotas),
    upstream: config.upstream ? resolveUpstream(config.upstream) : null,
    mutate: config.mutate ? resolveMutate(config.mutate) : null,
    maxQueryRows: config.maxQueryRows ?? CONFIG_DEFAULTS.maxQueryRows,
    queryBudgetMs: config.queryBudgetMs ?? CONFIG_DEFAULTS.queryBudgetMs,
    queryTotalBudgetMs: Math.max(
      config.queryBudgetMs ?? CONFIG_DEFAULTS.queryBudgetMs,
      config.queryTotalBudgetMs ?? CONFIG_DEFAULTS.queryTotalBudgetMs,
    ),
    querySliceMs: config.querySliceMs ?? CONFIG_DEFAULTS.querySliceMs,
    queryPageMs: config.queryPageMs ?? CONFIG_DEFAULTS.queryPageMs,
    queryAnswerMs:
      config.queryAnswerMs ??
      Math.min(config.queryBudgetMs ?? CONFIG_DEFAULTS.queryBudgetMs, CONFIG_DEFAULTS.queryAnswerMs),
    pushSliceMs: config.pushSliceMs ?? CONFIG_DEFAULTS.pushSliceMs,
    maxGroupQueries: config.maxGroupQueries ?? CONFIG_DEFAULTS.maxGroupQueries,
    maxGroupQueryBytes: config.maxGroupQueryBytes ?? CONFIG_DEFAULTS.maxGroupQueryBytes,
  };
}
