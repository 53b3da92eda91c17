/** The first wait after a failure; each further attempt doubles it. */
export const FIRST_RETRY_MS = 1_000;
/** No wait is longer, jitter included. */
export const MAX_RETRY_MS = 60_000;

/**
 * How long to wait before attempt `attempt` (1, 2, ...) after a failure: one second doubled
 * for each earlier attempt, plus up to as much again as jitter (`random` in [0, 1)), capped at
 * 60 seconds. The jitter spreads the reconnects of many readers after one server restart.
 */
export function retryDelay(attempt: number, random: number = Math.random()): number {
  const base = FIRST_RETRY_MS * 2 ** Math.min(Math.max(attempt, 1) - 1, 16);
  return Math.min(MAX_RETRY_MS, Math.round(base + base * random));
}
