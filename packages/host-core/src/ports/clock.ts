export interface Clock {
  /** Wall time in epoch milliseconds, for log lines. */
  now(): number;
  /** A monotonic time in milliseconds, for durations. */
  monotonic(): number;
}

/** Milliseconds since `started` on this clock, to the microsecond (short in a log line). */
export function elapsedMs(clock: Clock, started: number): number {
  return Math.round((clock.monotonic() - started) * 1000) / 1000;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  monotonic: () => performance.now(),
};
