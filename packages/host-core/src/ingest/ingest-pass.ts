import {
  type Engine,
  EngineError,
  type QuarantinedRow,
  reduceUpstreamBatch,
  type Schema,
  snapshotRows,
  type UpstreamState,
} from "@weir/engine-wasm";
import {
  retryDelayMs,
  UpstreamCallError,
  type UpstreamChangesPage,
  UpstreamGoneError,
  type UpstreamSnapshotPage,
  type UpstreamSource,
} from "@weir/protocol";
import type { NamespaceStore } from "../ports/storage.js";
import type { IngestBreaker } from "./ingest-breaker.js";

/** How a pass ended (the CLI's `outcome`). */
export type IngestOutcome = "complete" | "pending_budget" | "pending_retry" | "wall_budget_exceeded";

export interface IngestBudget {
  /** Stop, between batches, once this many rows were ingested. */
  maxRows?: number;
  /** Stop once the upstream's answers came to this many bytes (as JSON). */
  maxBytes?: number;
  /** Stop at this time (the clock's monotonic milliseconds). */
  deadline?: number;
  /** Calls of one request before the pass gives up until later (default 5). */
  maxAttempts?: number;
}

export interface IngestPassInput {
  engine: Engine;
  store: NamespaceStore;
  schema: Schema;
  source: UpstreamSource;
  /** This ingester's fencing token (`Engine.claimFence`). */
  fence: number;
  breaker: IngestBreaker;
  /** Wall time (epoch ms) for the breaker, monotonic time for the budget. */
  now(): number;
  monotonic(): number;
  sleep(ms: number): Promise<void>;
  random(): number;
  budget?: IngestBudget;
  /** Start a new snapshot generation even though the cursor is current. */
  resnapshot?: boolean;
  /** Changes asked per call (default 1,000) and rows per snapshot page (default 2,000). */
  changesLimit?: number;
  pageRows?: number;
  /** Before each upstream call (it counts attempts, a crash during the call included). */
  onAttempt?(): void;
  /** A call failed and is tried again at `retryAt` (epoch ms); `null` once one answers. */
  onRetry?(failure: { error: string; retryAt: number } | null): void;
  /** After each transaction that committed a new version (wake clients). */
  onCommitted?(): void;
  /**
   * After a transaction that left out rows whose values the schema cannot hold (NaN in a number
   * column, null in one that is not nullable): the namespace dropped them and ingest goes on.
   */
  onQuarantined?(rows: readonly QuarantinedRow[]): void;
  onProgress?(progress: IngestProgress): void;
  /** True once the pass must stop (its namespace is closing): it ends as `pending_retry`. */
  stopped?(): boolean;
}

export interface IngestProgress {
  phase: "changes" | "snapshot" | "catch_up" | "finalize";
  rows: number;
  bytes: number;
  cursor: string | null;
  table?: string | null;
}

export interface IngestPassResult {
  outcome: IngestOutcome;
  rows: number;
  bytes: number;
  batches: number;
  cursorBefore: string | null;
  cursorAfter: string | null;
  attempts: number;
  /** When `pending_retry`: when the next attempt may go (epoch ms), and what failed. */
  retryAt?: number;
  error?: string;
  /** A snapshot generation still being built, if one is. */
  snapshot: UpstreamState["snapshot"];
}

const MIN_PAGE_ROWS = 100;

/** The pass stops here, to be resumed from the stored progress. */
class Stop {
  constructor(
    readonly outcome: IngestOutcome,
    readonly retryAt?: number,
    readonly error?: string,
  ) {}
}

function retryable(error: unknown): error is UpstreamCallError {
  return error instanceof UpstreamCallError && (error.status === 429 || error.status >= 500);
}

/**
 * A refusal that says this side is configured wrong (an unknown table or route, a refused
 * token, a namespace the upstream does not take): asking again changes nothing. 409 (a cursor
 * from another upstream) and 410 have answers of their own.
 */
function misconfigured(error: unknown): error is UpstreamCallError {
  return error instanceof UpstreamCallError && [400, 401, 403, 404].includes(error.status);
}

const withBigints = (_key: string, item: unknown) => (typeof item === "bigint" ? item.toString() : item);

/**
 * About what the value came to as JSON. A plain stringify first: a replacer function makes it
 * several times slower, and only a bigint (in process) needs one.
 */
function approximateBytes(value: unknown): number {
  try {
    return JSON.stringify(value).length;
  } catch {
    return JSON.stringify(value, withBigints).length;
  }
}

/** Each change's table, op and rows, plus its watermark and the keys' names (about 60 bytes). */
const CHANGE_FRAME_BYTES = 60;

function changesBytes(changes: UpstreamChangesPage["changes"]): number {
  const rows = changes.map((change) => [change.tableName, change.op, change.rowData, change.oldData]);
  return approximateBytes(rows) + CHANGE_FRAME_BYTES * changes.length;
}

/**
 * One bounded ingest pass: applies the upstream's changes after the namespace's cursor, batch by
 * batch, each in its own transaction with its cursor and as one version, until caught up or a
 * budget stops it. A cursor the upstream no longer serves (410), a namespace never synced, or
 * `resnapshot` builds a snapshot generation first: pages into staging tables (a page that fails
 * with a 5xx is asked again with half as many rows, down to 100), a catch-up from the first
 * page's watermark, then one swap. All progress is stored, so a pass stopped anywhere (a budget,
 * a retry, a crash) resumes where it was. Calls that fail with 429 or 5xx are retried after a
 * second doubled per attempt plus jitter (a Retry-After wins), within the budget.
 */
export async function runIngestPass(input: IngestPassInput): Promise<IngestPassResult> {
  const { engine, store, schema, source, fence, breaker } = input;
  const budget = input.budget ?? {};
  const maxAttempts = budget.maxAttempts ?? 5;
  const changesLimit = input.changesLimit ?? 1_000;
  const tables = Object.keys(schema.tables);
  const db = store.db;
  const read = () => engine.upstreamState(db);
  let state = read();
  const cursorBefore = state.cursor;
  let rows = 0;
  let bytes = 0;
  let batches = 0;
  let attempts = 0;
  let pageRows = input.pageRows ?? 2_000;
  let resnapshot = input.resnapshot === true;

  const progress = (phase: IngestProgress["phase"], table?: string | null) =>
    input.onProgress?.({
      phase,
      rows,
      bytes,
      cursor: state.cursor,
      ...(table === undefined ? {} : { table }),
    });

  const checkStopped = () => {
    if (input.stopped?.())
      throw new Stop("pending_retry", undefined, "ingest stopped: the namespace is closing");
  };

  const checkBudget = () => {
    checkStopped();
    if (budget.deadline !== undefined && input.monotonic() >= budget.deadline)
      throw new Stop("wall_budget_exceeded");
    if (
      (budget.maxRows !== undefined && rows >= budget.maxRows) ||
      (budget.maxBytes !== undefined && bytes >= budget.maxBytes)
    ) {
      throw new Stop("pending_budget");
    }
  };

  /** Calls the upstream, retrying what may pass; a 5xx snapshot page is asked again smaller. */
  const call = async <T>(fetchOnce: () => Promise<T>, halve = false): Promise<T> => {
    for (let attempt = 1; ; attempt++) {
      checkStopped();
      input.onAttempt?.();
      attempts++;
      try {
        const answer = await fetchOnce();
        if (attempt > 1) input.onRetry?.(null);
        checkStopped();
        return answer;
      } catch (error) {
        if (error instanceof Stop) throw error;
        if (misconfigured(error)) {
          breaker.trip(
            "upstream_config",
            input.now(),
            `the upstream answered ${error.status}: ${error.message}`,
          );
        }
        if (!retryable(error)) throw error;
        if (halve && error.status >= 500 && pageRows > MIN_PAGE_ROWS) {
          pageRows = Math.max(MIN_PAGE_ROWS, Math.floor(pageRows / 2));
          attempt = 0;
          continue;
        }
        const delay = retryDelayMs(attempt, input.random(), error.retryAfterMs);
        const retryAt = input.now() + delay;
        const pastDeadline = budget.deadline !== undefined && input.monotonic() + delay >= budget.deadline;
        if (attempt >= maxAttempts || pastDeadline) throw new Stop("pending_retry", retryAt, error.message);
        input.onRetry?.({ error: error.message, retryAt });
        await input.sleep(delay);
      }
    }
  };

  /**
   * The next page, asked while the current one is applied when it came full (more is likely
   * waiting), so the upstream reads and sends while this side writes. Used only if the cursor
   * then stands where it was asked from; a page not used is dropped.
   */
  let ahead: { after: string; page: Promise<UpstreamChangesPage> } | null = null;

  const changesAfter = async (watermark: string) => {
    const next = ahead;
    ahead = null;
    const page =
      next !== null && next.after === watermark
        ? await next.page
        : await call(() => source.changes(BigInt(watermark), changesLimit));
    bytes += changesBytes(page.changes);
    if (page.changes.length >= changesLimit && page.watermark.toString() !== watermark) {
      const after = page.watermark.toString();
      const prefetched = call(() => source.changes(page.watermark, changesLimit));
      // Awaited only if used: a failure of a page never used must not surface on its own.
      prefetched.catch(() => {});
      ahead = { after, page: prefetched };
    }
    return page;
  };

  const snapshotPage = (table: string, cursor: string | null) =>
    call(() => source.snapshotPage(table, cursor, pageRows), true).then((page: UpstreamSnapshotPage) => {
      bytes += approximateBytes(page.rows);
      return page;
    });

  const quarantine = (found: readonly QuarantinedRow[]) => {
    if (found.length > 0) input.onQuarantined?.(found);
  };

  const writePage = (table: string, page: UpstreamSnapshotPage) => {
    const quarantined: QuarantinedRow[] = [];
    const values = snapshotRows(schema, table, page.rows, quarantined);
    store.transaction(() =>
      engine.applySnapshotPage(db, { table, rows: values, nextCursor: page.nextCursor }, fence),
    );
    rows += page.rows.length;
    quarantine(quarantined);
  };

  /** A new generation: its first page tells the watermark it starts at. */
  const beginGeneration = async () => {
    const first = tables[0];
    if (first === undefined) throw new EngineError("bad_request", "a snapshot needs a modelled table");
    const page = await snapshotPage(first, null);
    store.transaction(() => {
      engine.beginSnapshot(db, page.watermark.toString(), fence);
      writePage(first, page);
    });
    resnapshot = false;
  };

  try {
    breaker.assertReady(input.now());
    for (;;) {
      checkBudget();
      const snapshot = state.snapshot;
      if (snapshot?.state === "paging") {
        const table = snapshot.table!;
        writePage(table, await snapshotPage(table, snapshot.cursor));
        progress("snapshot", table);
      } else if (snapshot?.state === "catching_up") {
        let page: UpstreamChangesPage;
        try {
          page = await changesAfter(snapshot.catchupWatermark);
        } catch (error) {
          if (!(error instanceof UpstreamGoneError)) throw error;
          await beginGeneration();
          state = read();
          continue;
        }
        if (page.changes.length === 0 && page.watermark.toString() === snapshot.catchupWatermark) {
          store.transaction(() => engine.finalizeSnapshot(db, fence));
          input.onCommitted?.();
          progress("finalize");
        } else {
          const reduced = reduceUpstreamBatch(schema, page.changes);
          const result = store.transaction(() =>
            engine.applyUpstream(
              db,
              { watermark: page.watermark.toString(), tables: reduced.tables },
              { fence, into: "snapshot" },
            ),
          );
          quarantine(reduced.quarantined);
          if (page.changes.length > 0 && page.watermark.toString() === snapshot.catchupWatermark) {
            breaker.trip("cursor_stalled", input.now());
          }
          rows += result.rows;
          batches++;
          progress("catch_up");
        }
      } else if (resnapshot || state.cursor === null) {
        await beginGeneration();
        progress("snapshot", tables[0]);
      } else {
        const cursor = state.cursor;
        let page: UpstreamChangesPage;
        try {
          page = await changesAfter(cursor);
        } catch (error) {
          if (!(error instanceof UpstreamGoneError)) throw error;
          resnapshot = true;
          continue;
        }
        if (page.changes.length === 0 && page.watermark.toString() === cursor) break;
        if (page.changes.length > 0 && page.watermark <= BigInt(cursor))
          breaker.trip("cursor_stalled", input.now());
        const reduced = reduceUpstreamBatch(schema, page.changes);
        const result = store.transaction(() =>
          engine.applyUpstream(
            db,
            { watermark: page.watermark.toString(), tables: reduced.tables },
            { fence },
          ),
        );
        if (result.committed) input.onCommitted?.();
        quarantine(reduced.quarantined);
        rows += result.rows;
        batches++;
        breaker.record(result.rows, input.now());
        progress("changes");
      }
      state = read();
    }
    breaker.close(input.now());
    return summary("complete");
  } catch (error) {
    breaker.flush();
    if (error instanceof Stop) return summary(error.outcome, error.retryAt, error.error);
    throw error;
  }

  function summary(outcome: IngestOutcome, retryAt?: number, error?: string): IngestPassResult {
    const final = read();
    return {
      outcome,
      rows,
      bytes,
      batches,
      cursorBefore,
      cursorAfter: final.cursor,
      attempts,
      ...(retryAt === undefined ? {} : { retryAt }),
      ...(error === undefined ? {} : { error }),
      snapshot: final.snapshot,
    };
  }
}
