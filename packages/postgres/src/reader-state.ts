import type { RelationShape, SchemaDrift } from "./schema-drift.js";

/**
 * `reloading`: a column was added to a followed table; the reader disconnected to read the tables
 * again and goes on under them.
 */
export type ReaderState = "starting" | "streaming" | "reconnecting" | "reloading" | "drift" | "stopped";

/** Where the reader is in its life: one value, moved only by `ReaderLifecycle`'s transitions. */
export type ReaderPhase =
  | { state: "starting" }
  | { state: "streaming" }
  | { state: "reconnecting" }
  | { state: "reloading"; relation: RelationShape; drift: SchemaDrift }
  | { state: "drift"; drift: SchemaDrift }
  | { state: "stopped" };

/**
 * The replication reader's lifecycle and what status shows of it. Each transition is named for
 * what happened, and is the only way the phase or the counters change:
 *
 *     starting ──connected──▶ streaming ──connectionLost──▶ reconnecting ──connected──▶ streaming
 *     starting ──failedAtStart──▶ stopped
 *     streaming ──columnAdded──▶ reloading ──reloaded──▶ reconnecting
 *     streaming | reloading ──drifted──▶ drift (final)
 *     any but drift ──ended──▶ stopped
 */
export class ReaderLifecycle {
  private current: ReaderPhase = { state: "starting" };
  /** Failed attempts since the last successful connection. */
  attempts = 0;
  /** Connections lost or refused since start. */
  failures = 0;
  lastError: string | null = null;
  /** Whether a connection ever streamed (a failure before that ends `start`). */
  started = false;

  get phase(): ReaderPhase {
    return this.current;
  }

  get state(): ReaderState {
    return this.current.state;
  }

  /** The drift the reader stopped at, if it did. */
  get drift(): SchemaDrift | null {
    return this.current.state === "drift" ? this.current.drift : null;
  }

  /**
   * Drift or a reload: the drifted transaction lies ahead, so nothing past it is read, and no
   * keepalive past it is confirmed (after a fix, the slot must send it again).
   */
  get halted(): boolean {
    return this.current.state === "drift" || this.current.state === "reloading";
  }

  /** A connection streams. */
  connected(): void {
    this.current = { state: "streaming" };
    this.started = true;
    this.attempts = 0;
    this.lastError = null;
  }

  /** The connection failed or closed after a start: the reader waits, then reconnects. */
  connectionLost(error: string): void {
    this.failures++;
    this.attempts++;
    this.lastError = error;
    this.current = { state: "reconnecting" };
  }

  /** The first connection failed: the caller of `start` hears it, and the reader stops. */
  failedAtStart(error: string): void {
    this.lastError = error;
    this.current = { state: "stopped" };
  }

  /** A Relation message showed a column added to a table whose every column is sent. */
  columnAdded(relation: RelationShape, drift: SchemaDrift): void {
    this.current = { state: "reloading", relation, drift };
  }

  /** The tables were read again and match the Relation message: reconnect under them. */
  reloaded(): void {
    this.current = { state: "reconnecting" };
  }

  /** Stopped before the drifted transaction until an operator fixes it and restarts. */
  drifted(drift: SchemaDrift): void {
    this.current = { state: "drift", drift };
    this.lastError = drift.message;
  }

  /** The reader's loop ended (stop, or a failure at start); a drift stays as it is. */
  ended(): void {
    if (this.current.state !== "drift") this.current = { state: "stopped" };
  }
}
