/** The first retry waits a second; each further attempt doubles it, up to a minute. */
const FIRST_DELAY_MS = 1_000;
const MAX_DELAY_MS = 60_000;

/**
 * How long to wait before attempt `attempt + 1` of an upstream call, after attempt `attempt`
 * (1 or more) failed: a second doubled for each earlier attempt, with up to as much again added
 * as jitter (`random` from 0 to 1), at most a minute. A `Retry-After` the upstream sent wins when
 * it is later, and is not capped.
 */
export function retryDelayMs(attempt: number, random: number, retryAfterMs?: number): number {
  const base = Math.min(MAX_DELAY_MS, FIRST_DELAY_MS * 2 ** Math.max(0, attempt - 1));
  const delay = Math.min(MAX_DELAY_MS, Math.round(base * (1 + Math.min(1, Math.max(0, random)))));
  return retryAfterMs !== undefined && retryAfterMs > delay ? retryAfterMs : delay;
}

/** A `Retry-After` header in milliseconds: delta seconds or an HTTP date; undefined when unreadable. */
export function parseRetryAfter(value: string | null, now: number): number | undefined {
  if (value === null || value.trim() === "") return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1_000;
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
