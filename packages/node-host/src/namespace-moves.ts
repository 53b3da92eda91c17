import type { Logger } from "@weir/host-core";
import { namespaceHash } from "@weir/host-core";
import { type OverflowOptions, OverflowPolicy } from "./overflow-policy.js";

/** What a move asks of the worker pool, in this order. */
export interface MoveSteps {
  /** Starts the overflow worker, unless it runs. */
  overflowReady(): Promise<void>;
  /** Closes the namespace's Zero sockets: their clients reconnect, to the worker it moves to. */
  closeSockets(namespace: string): void;
  /** Has worker `thread` close the namespace once its last request is answered. */
  release(thread: number, namespace: string): Promise<void>;
  /** The namespace runs in the worker it moved to now: its wake subscriptions follow it from `from`. */
  moved(namespace: string, from: number): void;
}

/**
 * Namespaces moving between their own worker and the overflow worker (the thread after the
 * `homeWorkers` the names hash to), as the overflow policy decides. A move holds the namespace's
 * new requests (`underWay`), closes its Zero sockets, has its old worker close it once its last
 * request is answered, then lets the held requests go to the new worker with its wake
 * subscriptions. A namespace quiet long enough is moved back by a timer.
 */
export class NamespaceMoves {
  private readonly policy: OverflowPolicy;
  /** Namespaces being moved, each resolved once its new worker may have its requests. */
  private readonly moving = new Map<string, Promise<void>>();
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

  /** A step of the namespace, in worker `thread` (where it runs now), held it `ms`, past the budget. */
  overBudget(namespace: string, thread: number, ms: number): void {
    if (this.closing || this.moving.has(namespace)) return;
    if (!this.policy.overBudget(namespace, performance.now())) return;
    this.move(namespace, thread, true, ms);
  }

  /** Stops moving namespaces back, and waits for the moves under way. */
  async close(): Promise<void> {
    this.closing = true;
    clearInterval(this.quietTimer);
    await Promise.allSettled([...this.moving.values()]);
  }

  private moveQuietBack(): void {
    if (this.closing) return;
    for (const namespace of this.policy.quiet(performance.now())) {
      if (!this.moving.has(namespace)) this.move(namespace, this.homeWorkers, false);
    }
  }

  private move(namespace: string, from: number, toOverflow: boolean, stepMs?: number): void {
    const started = performance.now();
    const done = (async () => {
      if (toOverflow) await this.steps.overflowReady();
      this.steps.closeSockets(namespace);
      await this.steps.release(from, namespace);
      if (toOverflow) this.policy.moved(namespace, performance.now());
      else this.policy.returned(namespace, performance.now());
      this.steps.moved(namespace, from);
      const fields = {
        msg: toOverflow ? "namespace moved to the overflow worker" : "namespace moved back to its worker",
        ...(stepMs === undefined ? {} : { stepMs: Math.round(stepMs) }),
        ...(toOverflow ? { quietMs: this.policy.stayMs(namespace) } : {}),
        // How long its requests were held.
        moveMs: Math.round(performance.now() - started),
      };
      // Logged without holding the namespace's requests for the hash.
      void namespaceHash(namespace).then((ns) => this.logger.log("info", { ...fields, ns }));
    })()
      .catch((error: unknown) =>
        this.logger.log("error", { msg: "moving a namespace failed", error: String(error) }),
      )
      .finally(() => this.moving.delete(namespace));
    this.moving.set(namespace, done);
  }
}
