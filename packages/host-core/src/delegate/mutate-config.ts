import * as v from "valibot";
import type { UpstreamFetch } from "../ingest/http-upstream.js";

/**
 * Delegated push: the namespace checks a push (ids, the group's owner, order), forwards the
 * mutations that are next to the app's own server, which writes them to the system of record,
 * and acknowledges them to the client only once their effects came back through ingest.
 */
export interface MutateConfig {
  /** The app's mutate endpoint, or each namespace's (null: the namespace runs its own mutators). */
  url: string | ((namespace: string) => string | null);
  /** How the call goes out (a Workers service binding's `fetch`); the global `fetch` by default. */
  fetch?: UpstreamFetch;
  /** One attempt's time limit (default 5,000 ms); 25,000 ms while the first snapshot is built. */
  timeoutMs?: number;
  firstSnapshotTimeoutMs?: number;
  /** Attempts of a call that fails on the network or with 429/502/503/504 (default 3). */
  attempts?: number;
  /** How long the namespace ingests for the app's writes before it gives up (default 10,000 ms). */
  effectsWaitMs?: number;
}

export interface ResolvedMutate {
  url: (namespace: string) => string | null;
  fetch?: UpstreamFetch;
  timeoutMs: number;
  firstSnapshotTimeoutMs: number;
  attempts: number;
  effectsWaitMs: number;
}

const MUTATE_DEFAULTS = {
  timeoutMs: 5_000,
  firstSnapshotTimeoutMs: 25_000,
  attempts: 3,
  effectsWaitMs: 10_000,
} as const;

const Count = (min: number) =>
  v.optional(v.pipe(v.number(), v.safeInteger("expected an integer"), v.minValue(min)));

export const MutateConfigShape = v.object({
  url: v.union(
    [v.pipe(v.string(), v.url("mutate.url must be a URL")), v.function()],
    "mutate.url must be a URL or a function of the namespace",
  ),
  fetch: v.optional(v.function("mutate.fetch must be a function")),
  timeoutMs: Count(1),
  firstSnapshotTimeoutMs: Count(1),
  attempts: Count(1),
  effectsWaitMs: Count(1),
});

export function resolveMutate(config: MutateConfig): ResolvedMutate {
  const url = config.url;
  return {
    ...config,
    url: typeof url === "function" ? url : () => url,
    timeoutMs: config.timeoutMs ?? MUTATE_DEFAULTS.timeoutMs,
    firstSnapshotTimeoutMs: config.firstSnapshotTimeoutMs ?? MUTATE_DEFAULTS.firstSnapshotTimeoutMs,
    attempts: config.attempts ?? MUTATE_DEFAULTS.attempts,
    effectsWaitMs: config.effectsWaitMs ?? MUTATE_DEFAULTS.effectsWaitMs,
  };
}
