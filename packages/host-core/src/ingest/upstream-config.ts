import type { UpstreamSource } from "@weir/protocol";
import * as v from "valibot";
import type { AuthRequest } from "../http/http-parts.js";
import { type BreakerLimits, DEFAULT_BREAKER_LIMITS } from "./ingest-breaker.js";

/**
 * A namespace that replicates a system of record: where its upstream is, and when it ingests
 * (on notify, before a pull or push once its last pass is older than `freshnessMs`, every
 * `pollMs` while wake sockets are open, and from the admin routes).
 */
export interface UpstreamConfig {
  /** One source for every namespace, or each namespace's (null: this namespace has none). */
  source: UpstreamSource | ((namespace: string) => UpstreamSource | null);
  /** A pull or push first ingests when the last pass is older than this (default 1,000 ms). */
  freshnessMs?: number;
  /** How long a pull or push waits for that pass before it answers from the replica (default 2,000 ms). */
  freshnessWaitMs?: number;
  /** While wake sockets are open, a pass runs this often (default 1,000 ms). */
  pollMs?: number;
  /**
   * `POST /<ns>/notify` and the ingest admin routes answer within this (default 5,000 ms): a pass
   * still running then goes on in the background (notify answers 503 while it retries).
   */
  answerWithinMs?: number;
  /** The circuit breaker's budget (default 2,000,000 rows in 5 minutes). */
  breaker?: Partial<BreakerLimits>;
  /** Changes asked per upstream call (default 1,000) and rows per snapshot page (default 2,000). */
  changesLimit?: number;
  pageRows?: number;
  /** `POST /<ns>/notify` with `Authorization: Bearer <notifyToken>` (or the admin key) is let in. */
  notifyToken?: string;
  /** Or a check of your own. Without either, only the admin check opens notify. */
  authorizeNotify?(request: AuthRequest, namespace: string): boolean | Promise<boolean>;
}

export interface ResolvedUpstream {
  source: (namespace: string) => UpstreamSource | null;
  freshnessMs: number;
  freshnessWaitMs: number;
  pollMs: number;
  answerWithinMs: number;
  breaker: BreakerLimits;
  changesLimit: number;
  pageRows: number;
  notifyToken?: string;
  authorizeNotify?(request: AuthRequest, namespace: string): boolean | Promise<boolean>;
}

export const UPSTREAM_DEFAULTS = {
  freshnessMs: 1_000,
  freshnessWaitMs: 2_000,
  pollMs: 1_000,
  answerWithinMs: 5_000,
  changesLimit: 1_000,
  pageRows: 2_000,
} as const;

const Count = (min: number) =>
  v.optional(v.pipe(v.number(), v.safeInteger("expected an integer"), v.minValue(min)));

export const UpstreamConfigShape = v.object({
  source: v.custom<UpstreamConfig["source"]>(
    (value) =>
      typeof value === "function" ||
      (typeof value === "object" &&
        value !== null &&
        typeof (value as UpstreamSource).changes === "function" &&
        typeof (value as UpstreamSource).snapshotPage === "function"),
    "upstream.source must be an UpstreamSource (changes, snapshotPage) or a function of the namespace",
  ),
  freshnessMs: Count(0),
  freshnessWaitMs: Count(0),
  pollMs: Count(10),
  answerWithinMs: Count(1),
  breaker: v.optional(v.object({ rows: Count(1), windowMs: Count(1) })),
  changesLimit: Count(1),
  pageRows: Count(100),
  notifyToken: v.optional(v.pipe(v.string(), v.minLength(8, "notifyToken must be at least 8 characters"))),
  authorizeNotify: v.optional(v.function("authorizeNotify(request, namespace) must be a function")),
});

export function resolveUpstream(config: UpstreamConfig): ResolvedUpstream {
  const source = config.source;
  return {
    ...config,
    source: typeof source === "function" ? source : () => source,
    freshnessMs: config.freshnessMs ?? UPSTREAM_DEFAULTS.freshnessMs,
    freshnessWaitMs: config.freshnessWaitMs ?? UPSTREAM_DEFAULTS.freshnessWaitMs,
    pollMs: config.pollMs ?? UPSTREAM_DEFAULTS.pollMs,
    answerWithinMs: config.answerWithinMs ?? UPSTREAM_DEFAULTS.answerWithinMs,
    breaker: { ...DEFAULT_BREAKER_LIMITS, ...config.breaker },
    changesLimit: config.changesLimit ?? UPSTREAM_DEFAULTS.changesLimit,
    pageRows: config.pageRows ?? UPSTREAM_DEFAULTS.pageRows,
  };
}
