import type { UpstreamState } from "@weir/engine-wasm";
import type { IngestPassInput, IngestPassResult } from "./ingest-pass.js";

/**
 * What a running ingest pass did so far, for an answer given before it ends: where it started,
 * what it applied, and the failed call it waits to retry, if any.
 */
export class PassProgress {
  rows = 0;
  bytes = 0;
  batches = 0;
  retrying: { error: string; retryAt: number } | null = null;

  constructor(
    readonly cursorBefore: string | null,
    readonly attemptsBefore: number,
  ) {}

  /** The pass's hooks that keep this up to date. */
  hooks(): Pick<IngestPassInput, "onProgress" | "onRetry"> {
    return {
      onProgress: (progress) => {
        this.rows = progress.rows;
        this.bytes = progress.bytes;
        if (progress.phase === "changes" || progress.phase === "catch_up") this.batches++;
      },
      onRetry: (failure) => {
        this.retrying = failure;
      },
    };
  }

  /**
   * The pass so far as a result: `pending_retry` while it waits to call a failing upstream
   * again, else `wall_budget_exceeded` (it goes on in the background either way).
   */
  result(state: UpstreamState, attempts: number): IngestPassResult {
    const retrying = this.retrying;
    return {
      outcome: retrying ? "pending_retry" : "wall_budget_exceeded",
      rows: this.rows,
      bytes: this.bytes,
      batches: this.batches,
      cursorBefore: this.cursorBefore,
      cursorAfter: state.cursor,
      attempts: attempts - this.attemptsBefore,
      ...(retrying
        ? { retryAt: retrying.retryAt, error: `${retrying.error}; retrying in the background` }
        : {}),
      snapshot: state.snapshot,
    };
  }
}
