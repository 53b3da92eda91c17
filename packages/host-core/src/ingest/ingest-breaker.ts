import { backoffMs, UPSTREAM_BACKOFF } from "@weir/protocol";
/**
 * Why ingest stopped: too many rows in a window, a batch that did not move the cursor, or an
 * upstream that refused the call as misconfigured (404 for an unknown table, 401, 403, 400).
 */
export type BreakerReason = "budget_exceeded" | "cursor_stalled" | "upstream_config";

/** The breaker as stored with the namespace's knobs, so eviction or a restart keeps it. */
export interface BreakerState {
  /** Set while open: why, and when the next pass may try again (epoch ms). */
  open: { reason: BreakerReason; retryAt: number; trips: number; error?: string } | null;
  /** The current window's start (epoch ms) and the rows ingested in it. */
  windowStart: number;
  windowRows: number;
}

export interface BreakerLimits {
  /** Rows ingested in one window before the breaker opens (default 2,000,000). */
  rows: number;
  /** The window (default 5 minutes). */
  windowMs: number;
}

/**
 * The breaker is for runaway ingest (a job or trigger rewriting rows without end), not for the
 * bulk updates an app runs every day: one UPDATE of a tenant's whole table is one burst, and the
 * largest tenant tables weir is measured with hold a million rows (`pnpm bench postgres`'s
 * initial sync). So a window passes two such updates, and opens under sustained ingest of more
 * than about 6,700 rows a second for five minutes; at the end-to-end ingest rate measured on
 * the project's machine (about 23,000 rows a second) a runaway opens it within 90 seconds.
 */
export const DEFAULT_BREAKER_LIMITS: BreakerLimits = { rows: 2_000_000, windowMs: 5 * 60_000 };

/** The upstream is paused: answers carry why and until when. */
export class BreakerOpenError extends Error {
  override readonly name = "BreakerOpenError";
  constructor(
    readonly reason: BreakerReason,
    readonly retryAt: number,
    /** What opened it, when it says more than the reason (the upstream's refusal). */
    readonly detail?: string,
    /** Thrown by the trip itself, not by a later attempt while open. */
    readonly tripped = false,
  ) {
    super(
      `ingest is paused (${reason}${detail ? `: ${detail}` : ""}) until ${new Date(retryAt).toISOString()}`,
    );
  }
}

export function closedBreaker(now: number): BreakerState {
  return { open: null, windowStart: now, windowRows: 0 };
}

/**
 * A circuit breaker on ingest: it opens when a window's rows pass the budget or a batch does not
 * move the cursor, backing off from a second doubling to a minute, and closes again after a
 * successful pass or an operator's reopen. Pulls and pushes go on while it is open.
 */
export class IngestBreaker {
  /** Rows were counted since the state was last stored. */
  private dirty = false;

  constructor(
    private state: BreakerState,
    private readonly limits: BreakerLimits,
    private readonly save: (state: BreakerState) => void,
  ) {}

  get current(): BreakerState {
    return this.state;
  }

  /** Throws BreakerOpenError while open and its retry time has not come. */
  assertReady(now: number): void {
    const open = this.state.open;
    if (open && now < open.retryAt) throw new BreakerOpenError(open.reason, open.retryAt, open.error);
  }

  /** Counts rows ingested; opens the breaker (and throws) once the window's budget is passed. */
  record(rows: number, now: number): void {
    if (now - this.state.windowStart >= this.limits.windowMs) {
      this.state = { ...this.state, windowStart: now, windowRows: 0 };
    }
    this.state = { ...this.state, windowRows: this.state.windowRows + rows };
    if (rows > 0) this.dirty = true;
    if (this.state.windowRows > this.limits.rows) this.trip("budget_exceeded", now);
  }

  /**
   * Opens the breaker: the next attempt waits a second doubled per trip, at most a minute; a
   * misconfigured upstream (which no retry soon fixes) waits the minute at once.
   */
  trip(reason: BreakerReason, now: number, error?: string): never {
    const trips = (this.state.open?.trips ?? 0) + 1;
    const backoff =
      reason === "upstream_config" ? UPSTREAM_BACKOFF.maxMs : backoffMs(UPSTREAM_BACKOFF, trips);
    const retryAt = now + backoff;
    this.state = {
      ...this.state,
      open: { reason, retryAt, trips, ...(error === undefined ? {} : { error }) },
    };
    this.store();
    throw new BreakerOpenError(reason, retryAt, error, true);
  }

  /**
   * Closes it after a successful pass (the window's count goes on), or for an operator's reopen
   * (`freshWindow`: the count starts again, or the next rows would open it at once).
   */
  close(now: number, freshWindow = false): void {
    if (!this.state.open && !freshWindow) {
      this.flush();
      return;
    }
    this.state = freshWindow ? closedBreaker(now) : { ...this.state, open: null };
    this.store();
  }

  /** Stores the window's count, if it moved (at the end of a pass). */
  flush(): void {
    if (this.dirty) this.store();
  }

  private store(): void {
    this.dirty = false;
    this.save(this.state);
  }
}
