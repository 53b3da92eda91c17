import { describe, expect, it } from "vitest";
import { backoffMs, parseRetryAfter, retryDelayMs as retryDelay } from "./retry.js";

describe("retryDelay", () => {
  it("waits one second doubled per earlier attempt, plus up to as much again as jitter, capped at a minute", () => {
    expect([1, 2, 3, 4, 5, 6, 7].map((attempt) => retryDelay(attempt, 0))).toEqual([
      1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000,
    ]);
    expect(retryDelay(1, 0.5)).toBe(1_500);
    expect(retryDelay(3, 0.999)).toBe(7_996);
    expect(retryDelay(6, 0.9)).toBe(60_000);
    expect(retryDelay(1_000, 0.5)).toBe(60_000);
  });

  it("waits for a later Retry-After instead, uncapped, in seconds or as an HTTP date", () => {
    expect(retryDelay(1, 0, 90_000)).toBe(90_000);
    expect(retryDelay(3, 0, 10)).toBe(4_000);
    expect(parseRetryAfter("7", 0)).toBe(7_000);
    expect(parseRetryAfter(new Date(65_000).toUTCString(), 5_000)).toBe(60_000);
    expect(parseRetryAfter("soon", 0)).toBeUndefined();
    expect(parseRetryAfter(null, 0)).toBeUndefined();
  });

  it("backs off without jitter when given none: a breaker's trips, the app's mutate endpoint", () => {
    expect([1, 2, 3, 7, 8].map((trips) => backoffMs({ firstMs: 1_000, maxMs: 60_000 }, trips))).toEqual([
      1_000, 2_000, 4_000, 60_000, 60_000,
    ]);
    const mutate = { firstMs: 100, maxMs: 1_000 };
    expect([1, 2, 3, 4, 5].map((failures) => backoffMs(mutate, failures))).toEqual([
      100, 200, 400, 800, 1_000,
    ]);
    expect(backoffMs(mutate, 1, { retryAfterMs: 3_000 })).toBe(3_000);
  });
});
