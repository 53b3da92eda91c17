import { performance } from "node:perf_hooks";
import { LatencyRecorder } from "./latency-recorder.js";

export interface TimedLoopOptions {
  workers: number;
  warmupMs: number;
  durationMs: number;
  /** One operation by one worker; answers how many units (mutations, pulls) it did. */
  step: (worker: number) => Promise<number>;
}

export interface TimedLoopStats {
  /** Operations and units that started inside the measured window and succeeded. */
  operations: number;
  units: number;
  errors: number;
  firstError?: string;
  elapsedMs: number;
  latency: LatencyRecorder;
}

/**
 * Runs `workers` closed loops (each waits for its answer before sending again) for a warmup
 * and then a measured window. Only operations that start inside the window count, and the
 * rate divides by the time from the window's start to the last of them finishing.
 */
export class TimedLoop {
  readonly stats: TimedLoopStats = {
    operations: 0,
    units: 0,
    errors: 0,
    elapsedMs: 0,
    latency: new LatencyRecorder(),
  };
  private measureFrom = 0;

  constructor(private readonly options: TimedLoopOptions) {}

  /** Seconds into the measured window (negative during warmup), for a progress line. */
  get windowSeconds(): number {
    return (performance.now() - this.measureFrom) / 1000;
  }

  async run(): Promise<TimedLoopStats> {
    const { workers, warmupMs, durationMs, step } = this.options;
    this.measureFrom = performance.now() + warmupMs;
    const end = this.measureFrom + durationMs;
    let lastDone = this.measureFrom;
    const loop = async (worker: number) => {
      while (performance.now() < end) {
        const started = performance.now();
        try {
          const units = await step(worker);
          const done = performance.now();
          if (started >= this.measureFrom) {
            this.stats.operations++;
            this.stats.units += units;
            this.stats.latency.record(done - started);
            lastDone = Math.max(lastDone, done);
          }
        } catch (error) {
          this.stats.errors++;
          this.stats.firstError ??= error instanceof Error ? error.message : String(error);
          // Back off a little so that a refusing server is not hammered in a tight loop.
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
      }
    };
    await Promise.all(Array.from({ length: workers }, (_, worker) => loop(worker)));
    this.stats.elapsedMs = Math.max(1, lastDone - this.measureFrom);
    return this.stats;
  }
}
