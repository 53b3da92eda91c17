import type { IngestBudget, IngestPassResult } from "./ingest-pass.js";

/**
 * A namespace's passes, one at a time: none running, one running, or one running with the next
 * queued behind it (shared by every caller that came meanwhile, a resnapshot if any asked one).
 */
export type PassState =
  | { kind: "idle" }
  | { kind: "running"; pass: Promise<IngestPassResult> }
  | {
      kind: "queued";
      pass: Promise<IngestPassResult>;
      next: Promise<IngestPassResult>;
      resnapshot: boolean;
    };

/**
 * Runs passes one at a time. Its state moves only by the transitions named below:
 *
 *     idle ──run──▶ running ──run──▶ queued ──run──▶ queued (resnapshot if any asked)
 *     running ──settled──▶ idle
 *     queued ──settled──▶ running (the queued pass starts)
 */
export class PassQueue {
  private state: PassState = { kind: "idle" };

  /** `begin` starts one pass; its settling (resolved or rejected) frees the queue. */
  constructor(
    private readonly begin: (resnapshot: boolean, budget?: IngestBudget) => Promise<IngestPassResult>,
  ) {}

  /** The pass running now, if one is. */
  get running(): Promise<IngestPassResult> | null {
    return this.state.kind === "idle" ? null : this.state.pass;
  }

  /** A pass that starts now, or, while one runs, the next one (shared by every caller meanwhile). */
  run(resnapshot: boolean, budget?: IngestBudget): Promise<IngestPassResult> {
    const state = this.state;
    switch (state.kind) {
      case "idle":
        return this.started(resnapshot, budget);
      case "queued":
        this.state = { ...state, resnapshot: state.resnapshot || resnapshot };
        return state.next;
      case "running": {
        const next = state.pass
          .catch(() => undefined)
          .then(() => {
            const queued = this.state;
            return this.started(queued.kind === "queued" && queued.resnapshot, budget);
          });
        this.state = { kind: "queued", pass: state.pass, next, resnapshot };
        return next;
      }
    }
  }

  /** idle or queued → running: `begin` starts the pass. */
  private started(resnapshot: boolean, budget?: IngestBudget): Promise<IngestPassResult> {
    const pass = this.begin(resnapshot, budget);
    this.state = { kind: "running", pass };
    pass.then(
      () => this.settled(pass),
      () => this.settled(pass),
    );
    return pass;
  }

  /** running → idle, once the pass that runs settled (a queued one has started by then, or will). */
  private settled(pass: Promise<IngestPassResult>): void {
    if (this.state.kind === "running" && this.state.pass === pass) this.state = { kind: "idle" };
  }
}
