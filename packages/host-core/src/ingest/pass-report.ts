import type { QuarantinedRow } from "@weir/engine-wasm";
import type { Logger } from "../ports/logger.js";
import { BreakerOpenError } from "./ingest-breaker.js";
import type { IngestPassResult } from "./ingest-pass.js";

/** What a host may see of each pass (metrics). */
export interface IngestEvent {
  ns: string;
  outcome: IngestPassResult["outcome"] | "failed" | "paused";
  rows: number;
  batches: number;
  /** Milliseconds since the namespace last caught up, null before it ever did. */
  lagMs: number | null;
}

/** How a namespace's passes are told: a log line for what an operator should see, an event per pass. */
export class PassReport {
  constructor(
    private readonly logger: Logger,
    /** The namespace as logs name it. */
    private readonly ns: string,
    /** Milliseconds since the namespace last caught up, null before it ever did. */
    private readonly lagMs: () => number | null,
    private readonly observe?: (event: IngestEvent) => void,
  ) {}

  /** A pass ended: waiting to retry the upstream is logged (unless the namespace is closing). */
  ended(result: IngestPassResult, closing: boolean): void {
    if (result.outcome === "pending_retry" && !closing) {
      this.logger.log("warn", {
        msg: "upstream unavailable",
        ns: this.ns,
        error: result.error,
        retryAt: result.retryAt === undefined ? undefined : new Date(result.retryAt).toISOString(),
      });
    }
    this.event(result.outcome, result.rows, result.batches);
  }

  /** A pass threw: the breaker paused ingest (logged when this pass tripped it), or it failed. */
  threw(error: unknown): void {
    if (error instanceof BreakerOpenError) {
      if (error.tripped) {
        this.logger.log("error", {
          msg: "ingest paused",
          ns: this.ns,
          reason: error.reason,
          error: error.message,
        });
      }
      this.event("paused", 0, 0);
    } else {
      this.logger.log("error", { msg: "ingest failed", ns: this.ns, error: (error as Error).message });
      this.event("failed", 0, 0);
    }
  }

  /** Rows left out for a value their column cannot hold (counted in the record): said in the log. */
  quarantined(rows: readonly QuarantinedRow[]): void {
    const last = rows[rows.length - 1]!;
    this.logger.log("warn", {
      msg: "rows quarantined: a value does not fit its column; the namespace left the rows out",
      ns: this.ns,
      rows: rows.length,
      table: last.table,
      reason: last.reason,
    });
  }

  private event(outcome: IngestEvent["outcome"], rows: number, batches: number): void {
    this.observe?.({ ns: this.ns, outcome, rows, batches, lagMs: this.lagMs() });
  }
}
