import type { Logger } from "@weir/host-core";
import { namespaceHash } from "@weir/host-core";
import { type OverflowOptions, OverflowPolicy } from "./overflow-policy.js";

/** How long a move waits for a moment without requests out before it holds them anyway (ms). */
const DRAIN_LIMIT_MS = 5_000;

/** Why a namespace moves to the overflow worker, as its log line says: a step's ms, or its ms of a busy second. */
type MoveReason = { stepMs?: number; busyMs?: number };

/** What a move asks of the worker pool. */
export interface MoveSteps {
  /** Starts the overflow worker, unless it runs. */
  overflowReady(): Promise<void>;
  /** Requests of the namespace out with its worker now. */
  inFlight(namespace: string): number;
  /** Resolves once none is (at once when none is). */
  drained(namespace: string): Promise<void>;
  /** Closes the namespace's Zero sockets: their clients reconnect, to the worker it moves to. */
  closeSockets(namespace: string): void;
  /** Has worker `thread` close the namespace once its last request is answered. */
  release(thread: number, namespace: string): Promise<void>;
  /** The namespace runs in the worker it moved to now: its wake subscriptions follow it from `from`. */
  moved(namespace: string, from: number): void;
}

/**
 * Namespaces moving between their own worker and the overflow worker (the thread after the
 * `homeWorkers` the names hash to), as the overflow policy decides. A move first waits, up to
 * DRAIN_LIMIT_MS, for a moment when none of the namespace's requests is out with its worker (its
 * requests go on meanwhile: one that waits on its upstream for seconds holds no other). Then it
 * holds the namespace's new requests (`underWay`), closes its Zero sockets, has the old worker
 * close it (after what is left of its work: the requests still out, a Zero frame, a step of an
 * ingest pass), and lets the held requests go to the new worker, with its wake subscriptions. A
 * namespace quiet long enough is moved back by a timer.
 */
export class NamespaceMoves {
  private readonly policy: OverflowPolicy;
  /** Namespaces whose moves wait for their requests out to be answered. */
  private readonly draining = new Set<string>();
  /** Namespaces being moved, each resolved once its new worker may have its requests. */
  private readonly moving = new Map<string, Promise<void>>();
  /** Every move under way, draining or not (what `close` waits for). */
  private readonly moves = new Set<Promise<void>>();
  private readonly quietTimer: NodeJS.Timeout;
  private closing = false;

  constructor(
    options: OverflowOptions,
    private readonly homeWorkers: number,
    private readonly steps: MoveSteps,
    private readonly logger: Logger,
  ) {
    this.policy = new OverflowPolicy(options);
    this.quietTimer = setInterval(
      () => this.moveQuietBack(),
      Math.min(5_000, Math.max(50, options.quietMs / 4)),
    );
    this.quietTimer.unref();
  }

  get stepBudgetMs(): number {
    return this.policy.stepBudgetMs;
  }

  /** Namespaces in the overflow worker now. */
  get size(): number {
    return this.policy.size;
  }

  /** Whether the namespace runs in the overflow worker (moving or not). */
  inOverflow(namespace: string): boolean {
    return this.policy.inOverflow(namespace);
  }

  /** The namespace's move under way, resolved once its new worker may have its requests. */
  underWay(namespace: string): Promise<void> | undefined {
    return this.moving.get(namespace);
  }

  /**
   * A step of the namespace, in worker `thread` (where it runs now), held it `ms`, past the
   * budget; or, `busy`, its steps held it `ms` of a second, past half (BusyShare).
   */
  overBudget(namespace: string, thread: number, ms: number, busy = false): void {
    if (this.closing || this.moveUnderWay(namespace)) return;
    if (!this.policy.overBudget(namespace, performance.now())) return;
    this.move(namespace, thread, true, busy ? { busyMs: Math.round(ms) } : { stepMs: Math.round(ms) });
  }

  /** Stops moving namespaces back, and waits for the moves under way. */
  async close(): Promise<void> {
    this.closing = true;
    clearInterval(this.quietTimer);
    await Promise.allSettled([...this.moves]);
  }

  private moveUnderWay(namespace: string): boolean {
    return this.draining.has(namespace) || this.moving.has(namespace);
  }

  private moveQuietBack(): void {
    if (this.closing) return;
    for (const namespace of this.policy.quiet(performance.now())) {
      if (!this.moveUnderWay(namespace)) this.move(namespace, this.homeWorkers, false);
    }
  }

  private move(namespace: string, from: number, toOverflow: boolean, why: MoveReason = {}): void {
    this.draining.add(namespace);
    const move = this.drainThenMove(namespace, from, toOverflow, why)
      .catch((error: unknown) =>
        this.logger.log("error", { msg: "moving a namespace failed", error: String(error) }),
      )
      .finally(() => {
        this.draining.delete(namespace);
        this.moves.delete(move);
      });
    this.moves.add(move);
  }

  private async drainThenMove(
    namespace: string,
    from: number,
    toOverflow: boolean,
    why: MoveReason,
  ): Promise<void> {
    const started = performance.now();
    if (toOverflow) await this.steps.overflowReady();
    if (this.steps.inFlight(namespace) > 0) {
      let timer: NodeJS.Timeout | undefined;
      let late = false;
      const limit = new Promise<void>((resolve) => {
        timer = setTimeout(() => {
          late = true;
          resolve();
        }, DRAIN_LIMIT_MS);
      });
      while (this.steps.inFlight(namespace) > 0 && !late) {
        await Promise.race([this.steps.drained(namespace), limit]);
      }
      clearTimeout(timer);
    }
    // From here on (in the same turn as the check above) its requests wait for the move.
    let letGo!: () => void;
    this.moving.set(namespace, new Promise<void>((resolve) => (letGo = resolve)));
    const held = performance.now();
    try {
      this.steps.closeSockets(namespace);
      await this.steps.release(from, namespace);
      if (toOverflow) this.policy.moved(namespace, performance.now());
      else this.policy.returned(namespace, performance.now());
      this.steps.moved(namespace, from);
    } finally {
      this.moving.delete(namespace);
      letGo();
    }
    const fields = {
      msg: toOverflow ? "namespace moved to the overflow worker" : "namespace moved back to its worker",
      ...why,
      ...(toOverflow ? { quietMs: this.policy.stayMs(namespace) } : {}),
      // How long it waited for its requests out, then how long it held new ones.
      drainMs: Math.round(held - started),
      moveMs: Math.round(performance.now() - held),
    };
    this.logger.log("info", { ...fields, ns: await namespaceHash(namespace) });
  }
}
