import { describe, expect, it } from "vitest";
import { BreakerOpenError, closedBreaker, DEFAULT_BREAKER_LIMITS, IngestBreaker } from "./ingest-breaker.js";

function breaker(): IngestBreaker {
  return new IngestBreaker(closedBreaker(0), DEFAULT_BREAKER_LIMITS, () => {});
}

describe("the ingest breaker's default budget", () => {
  it("passes a bulk update of a million-row tenant table, twice in one window", () => {
    const b = breaker();
    // In batches of 1,000 changes (the default `changesLimit`), 200 seconds in all: one window.
    for (let batch = 0; batch < 2_000; batch++) b.record(1_000, batch * 100);
    expect(b.current.open).toBeNull();
  });

  it("opens on ingest that does not stop: 23,000 rows a second within 90 seconds", () => {
    const b = breaker();
    let opened: number | null = null;
    for (let second = 0; second < 300 && opened === null; second++) {
      try {
        b.record(23_000, second * 1_000);
      } catch (error) {
        expect(error).toBeInstanceOf(BreakerOpenError);
        opened = second;
      }
    }
    expect(opened).not.toBeNull();
    expect(opened!).toBeLessThan(90);
  });
});
