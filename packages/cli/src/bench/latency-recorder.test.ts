import { describe, expect, it } from "vitest";
import { LatencyRecorder, percentileOf } from "./latency-recorder.js";

describe("LatencyRecorder", () => {
  it("answers nearest-rank percentiles over every sample, growing past its first buffer", () => {
    const recorder = new LatencyRecorder();
    for (let i = 5000; i >= 1; i--) recorder.record(i);
    expect(recorder.summary()).toEqual({
      count: 5000,
      meanMs: 2500.5,
      p50Ms: 2500,
      p90Ms: 4500,
      p95Ms: 4750,
      p99Ms: 4950,
      maxMs: 5000,
    });
  });

  it("answers zeros without samples", () => {
    expect(new LatencyRecorder().summary()).toMatchObject({ count: 0, p99Ms: 0, maxMs: 0 });
    expect(percentileOf(new Float64Array(), 50)).toBe(0);
  });
});
