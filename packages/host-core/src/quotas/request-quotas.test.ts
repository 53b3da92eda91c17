import { describe, expect, it } from "vitest";
import { HttpError } from "../http/http-error.js";
import type { Clock } from "../ports/clock.js";
import { memoryQuotaStore } from "../ports/quota-store.js";
import { RequestQuotas } from "./request-quotas.js";

const MINUTE = 60_000;
const budget = { limit: 10, windowMs: MINUTE };

function setup() {
  let now = 100 * MINUTE;
  const clock: Clock = { now: () => now, monotonic: () => now };
  const store = memoryQuotaStore();
  const quotas = new RequestQuotas(store, clock, (error) => {
    throw error;
  });
  const refusal = (): HttpError | null => {
    try {
      quotas.admit("u", budget, "rate_limited", "spent");
      return null;
    } catch (error) {
      return error as HttpError;
    }
  };
  // Admitted under a budget too large to refuse, so the spend alone is tested.
  const charge = (units: number) =>
    quotas.charge(quotas.admit("u", { limit: 1e9, windowMs: MINUTE }, "rate_limited", ""), units, true);
  return { quotas, store, refusal, charge, at: (ms: number) => (now = 100 * MINUTE + ms) };
}

describe("RequestQuotas", () => {
  it("admits while the sliding estimate is under the limit, and says when it will be again", () => {
    const { charge, refusal, at } = setup();
    at(30_000);
    charge(9);
    expect(refusal()).toBeNull();
    charge(1);
    const refused = refusal();
    expect(refused).toMatchObject({ status: 429, code: "rate_limited" });
    const seconds = Number(refused!.headers["retry-after"]);
    // The whole limit was spent in this window: it must slide out past the next window's start.
    at(30_000 + seconds * 1000 - 1_000);
    expect(refusal()).not.toBeNull();
    at(30_000 + seconds * 1000);
    expect(refusal()).toBeNull();
  });

  it("counts the previous window in proportion to what still overlaps", () => {
    const { charge, refusal, at } = setup();
    at(50_000);
    charge(10);
    // A quarter into the next window, three quarters of the previous one's 10 still count.
    at(MINUTE + 15_000);
    charge(2);
    expect(refusal()).toBeNull(); // 7.5 + 2
    charge(1);
    const refused = refusal(); // 7.5 + 3
    expect(Number(refused?.headers["retry-after"])).toBe(4); // under 10 once 7 + 3 is passed, at 0.3
    at(MINUTE + 15_000 + 2_900);
    expect(refusal()).not.toBeNull();
    at(MINUTE + 15_000 + 4_000);
    expect(refusal()).toBeNull();
  });

  it("shares spends through the store: another instance on it sees them after a flush", () => {
    const { charge, store, at } = setup();
    at(1_000);
    charge(10);
    let now = 100 * MINUTE + 2_000;
    const other = new RequestQuotas(store, { now: () => now, monotonic: () => now }, () => {});
    expect(() => other.admit("u", budget, "rate_limited", "spent")).toThrow(HttpError);
    now += MINUTE * 2;
    expect(() => other.admit("u", budget, "rate_limited", "spent")).not.toThrow();
  });
});
