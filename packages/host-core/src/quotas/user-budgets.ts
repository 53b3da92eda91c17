import type { ResolvedQuotas } from "../config/quota-config.js";
import { DAY_MS } from "../config/quota-config.js";
import type { RequestRecord } from "../http/request-record.js";
import type { Clock } from "../ports/clock.js";
import type { QuotaStore } from "../ports/quota-store.js";
import type { ZeroMessageCost } from "../zero/zero-meter.js";
import { type Budget, type KeyState, RequestQuotas } from "./request-quotas.js";

/** A user admitted to a request, to be charged once it is answered. */
export type Admitted = KeyState;

/**
 * The quotas of the config applied to users: a budget of weighted requests per window, and one of
 * new namespaces per day. Users are told apart by their claims' userID.
 */
export class UserBudgets {
  private readonly quotas: RequestQuotas;
  private readonly requests: Budget | null;
  private readonly namespaces: Budget | null;

  constructor(
    private readonly config: ResolvedQuotas,
    store: QuotaStore,
    clock: Clock,
    onError: (error: unknown) => void,
  ) {
    this.quotas = new RequestQuotas(store, clock, onError);
    this.requests =
      config.requestUnits === null ? null : { limit: config.requestUnits, windowMs: config.windowMs };
    this.namespaces =
      config.newNamespacesPerDay === null ? null : { limit: config.newNamespacesPerDay, windowMs: DAY_MS };
  }

  /** Throws 429 when the user has spent their request budget; null when there is none. */
  admitRequest(userID: string): Admitted | null {
    if (!this.requests) return null;
    return this.quotas.admit(`r:${userID}`, this.requests, "rate_limited", "request quota spent");
  }

  /** Charges an answered request's weight: what it turned out to cost. */
  chargeRequest(admitted: Admitted, record: RequestRecord): void {
    if (record.status !== 429) this.quotas.charge(admitted, this.weight(record));
  }

  /**
   * Admits and charges a message on a Zero socket at once (its cost is known before it runs):
   * a push's weight with its mutations, a change of queries a pull's. Throws 429 when spent.
   */
  chargeZeroMessage(userID: string, cost: ZeroMessageCost): void {
    if (!this.requests) return;
    if (cost.kind === "evaluated") {
      this.quotas.spend(`r:${userID}`, this.requests, this.config.weights.queryRows * thousands(cost.rows));
      return;
    }
    const admitted = this.quotas.admit(`r:${userID}`, this.requests, "rate_limited", "request quota spent");
    const weights = this.config.weights;
    this.quotas.charge(
      admitted,
      cost.kind === "push"
        ? weights.push + weights.mutation * cost.mutations
        : weights.pull + weights.queryOp * cost.ops,
    );
  }

  /** Throws 429 when the user created as many namespaces as a day allows; else counts this one. */
  admitNamespace(userID: string): void {
    if (!this.namespaces) return;
    const admitted = this.quotas.admit(
      `n:${userID}`,
      this.namespaces,
      "namespace_quota",
      "new namespace quota spent",
    );
    this.quotas.charge(admitted, 1, true);
  }

  /** Writes what was spent to the store (also done within 100 ms of a spend). */
  flush(): void {
    this.quotas.flush();
  }

  private weight(record: RequestRecord): number {
    const weights = this.config.weights;
    switch (record.kind) {
      case "pull":
      case "replicache_pull":
        return (
          (record.cookieIn === record.cookieOut && record.reset === false
            ? weights.caughtUpPull
            : weights.pull) +
          weights.queryOp * (record.queryOps ?? 0) +
          weights.queryRows * thousands(record.queryRows ?? 0) +
          weights.rowsAnswered * thousands((record.puts ?? 0) + (record.dels ?? 0))
        );
      case "push":
      case "replicache_push":
        return weights.push + weights.mutation * (record.mutations ?? 0);
      case "wake":
        return weights.wake;
      default:
        return 0;
    }
  }
}

/** Whole thousands of rows: a small query costs nothing beyond its pull. */
function thousands(rows: number): number {
  return Math.floor(rows / 1000);
}
