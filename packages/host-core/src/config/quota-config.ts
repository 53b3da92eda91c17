import * as v from "valibot";

/** What a request costs a user, in units of their budget. */
export interface RequestWeights {
  /** A pull answered `unchanged` (most pulls of a live app): answered from memory. */
  caughtUpPull: number;
  /** Any other pull: changes since the cookie, or a reset. */
  pull: number;
  /** A push, plus `mutation` for each of its mutations. */
  push: number;
  mutation: number;
  /** Opening a wake socket. */
  wake: number;
  /**
   * Each operation of a query patch (a native pull's `queries.patch`, a Zero initConnection or
   * changeDesiredQueries).
   */
  queryOp: number;
  /** Each 1,000 rows a pull's query evaluations produced or examined (their cost, however long). */
  queryRows: number;
  /** Each 1,000 rows a pull answered, put or deleted (a reset answers every row the user may see). */
  rowsAnswered: number;
}

/** Per-user budgets. A user past one answers 429 with Retry-After until the budget frees up. */
export interface QuotaConfig {
  /** Units one user may spend in any window of `windowMs`; null for no limit. Default 100,000. */
  requestUnits?: number | null;
  /** Default 60,000 ms. */
  windowMs?: number;
  /**
   * Defaults: caught-up pull 1, other pull 5, push 10 plus 1 a mutation, wake socket 5, and on a
   * query-aware pull 1 an operation of its query patch and 1 each 1,000 rows its evaluations
   * produced or examined; and 1 each 1,000 rows a pull answers.
   */
  weights?: Partial<RequestWeights>;
  /** Namespaces one user may create per day; null for no limit. Default 100. */
  newNamespacesPerDay?: number | null;
}

export interface ResolvedQuotas {
  requestUnits: number | null;
  windowMs: number;
  weights: RequestWeights;
  newNamespacesPerDay: number | null;
}

export const DEFAULT_WEIGHTS: Readonly<RequestWeights> = {
  caughtUpPull: 1,
  pull: 5,
  push: 10,
  mutation: 1,
  wake: 5,
  queryOp: 1,
  queryRows: 1,
  rowsAnswered: 1,
};

export const QUOTA_DEFAULTS = {
  requestUnits: 100_000,
  windowMs: 60_000,
  newNamespacesPerDay: 100,
} as const;

export const DAY_MS = 86_400_000;

const Units = v.pipe(v.number(), v.safeInteger("expected an integer"), v.minValue(1));
const Weight = v.pipe(v.number(), v.safeInteger("expected an integer"), v.minValue(0));

export const QuotaConfigShape = v.strictObject({
  requestUnits: v.optional(v.nullable(Units)),
  windowMs: v.optional(v.pipe(v.number(), v.safeInteger("expected an integer"), v.minValue(1_000))),
  weights: v.optional(
    v.strictObject({
      caughtUpPull: v.optional(Weight),
      pull: v.optional(Weight),
      push: v.optional(Weight),
      mutation: v.optional(Weight),
      wake: v.optional(Weight),
      queryOp: v.optional(Weight),
      queryRows: v.optional(Weight),
      rowsAnswered: v.optional(Weight),
    }),
  ),
  newNamespacesPerDay: v.optional(v.nullable(Units)),
});

export function resolveQuotas(config: QuotaConfig = {}): ResolvedQuotas {
  return {
    requestUnits: config.requestUnits === undefined ? QUOTA_DEFAULTS.requestUnits : config.requestUnits,
    windowMs: config.windowMs ?? QUOTA_DEFAULTS.windowMs,
    weights: { ...DEFAULT_WEIGHTS, ...config.weights },
    newNamespacesPerDay:
      config.newNamespacesPerDay === undefined
        ? QUOTA_DEFAULTS.newNamespacesPerDay
        : config.newNamespacesPerDay,
  };
}
