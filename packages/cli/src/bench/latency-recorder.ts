/** Percentiles of a set of latencies, in milliseconds. */
export interface LatencySummary {
  count: number;
  meanMs: number;
  p50Ms: number;
  p90Ms: number;
  p95Ms: number;
  p99Ms: number;
  maxMs: number;
}

/** Collects latency samples in a growable typed array (cheap for millions of samples). */
export class LatencyRecorder {
  private samples = new Float64Array(1024);
  private length = 0;

  record(ms: number): void {
    if (this.length === this.samples.length) {
      const grown = new Float64Array(this.samples.length * 2);
      grown.set(this.samples);
      this.samples = grown;
    }
    this.samples[this.length++] = ms;
  }

  get count(): number {
    return this.length;
  }

  /** The latest percentile without disturbing the recording (for the progress line). */
  percentile(p: number): number {
    return percentileOf(this.samples.slice(0, this.length).sort(), p);
  }

  summary(): LatencySummary {
    const sorted = this.samples.slice(0, this.length).sort();
    let total = 0;
    for (const sample of sorted) total += sample;
    return {
      count: this.length,
      meanMs: round(this.length ? total / this.length : 0),
      p50Ms: round(percentileOf(sorted, 50)),
      p90Ms: round(percentileOf(sorted, 90)),
      p95Ms: round(percentileOf(sorted, 95)),
      p99Ms: round(percentileOf(sorted, 99)),
      maxMs: round(sorted.length ? sorted[sorted.length - 1]! : 0),
    };
  }
}

/** Nearest-rank percentile of ascending samples; 0 for none. */
export function percentileOf(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return 0;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

export function round(value: number, digits = 2): number {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}
