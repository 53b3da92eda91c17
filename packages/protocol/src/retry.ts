/** A backoff: the first wait, doubled per attempt up to a cap. */
export interface Backoff {
  firstMs: number;
  maxMs: number;
}

/** The upstream contract's retry policy: a second, doubled per attempt, at most a minute. */
export const UPSTREAM_BACKOFF: Backoff = { firstMs: 1_000, maxMs: 60_000 };

/**
 * How long to wait after the `failures`-th failure in a row (1 or more): `firstMs` doubled for
 * each earlier one, at most `maxMs`. With `random` (0 to 1), up to as much again is added as
 * jitter, still at most `maxMs`. A `retryAfterMs` the other side asked for wins when it is later,
 * and is not capped.
 */
export function backoffMs(
  backoff: Backoff,
  failures: number,
  options: { random?: number; retryAfterMs?: number } = {},
): number {
  const base = Math.min(backoff.maxMs, backoff.firstMs * 2 ** Math.max(0, failures - 1));
  const jitter = options.random === undefined ? 0 : Math.min(1, Math.max(0, options.random));
  const delay = Math.min(backoff.maxMs, Math.round(base * (1 + jitter)));
  const { retryAfterMs } = options;
  return retryAfterMs !== undefined && retryAfterMs > delay ? retryAfterMs : delay;
}

/**
 * How long to wait before attempt `attempt + 1` of an upstream call, after attempt `attempt`
 * (1 or more) failed: `UPSTREAM_BACKOFF` with jitter (`random` from 0 to 1); a later
 * `Retry-After` wins.
 */
export function retryDelayMs(attempt: number, random: number, retryAfterMs?: number): number {
  return backoffMs(UPSTREAM_BACKOFF, attempt, { random, retryAfterMs });
}

/** A `Retry-After` header in milliseconds: delta seconds or an HTTP date; undefined when unreadable. */
export function parseRetryAfter(value: string | null, now: number): number | undefined {
  if (value === null || value.trim() === "") return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1_000;
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
