export interface Clock {
  /** Wall time in epoch milliseconds, for log lines. */
  now(): number;
  /** A monotonic time in milliseconds, for durations. */
  monotonic(): number;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  monotonic: () => performance.now(),
};
