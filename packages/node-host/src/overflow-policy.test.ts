import { describe, expect, it } from "vitest";
import { MAX_OVERFLOW_NAMESPACES, MAX_STAY_FACTOR, OverflowPolicy } from "./overflow-policy.js";

describe("OverflowPolicy", () => {
  const options = { stepBudgetMs: 50, quietMs: 1_000 };

  it("moves a namespace on its second step past the budget within the quiet time, not its first", () => {
    const policy = new OverflowPolicy(options);
    expect(policy.overBudget("a", 0)).toBe(false);
    expect(policy.overBudget("a", 999)).toBe(true);
    // Steps far apart are pauses, not a pattern: each starts the count again.
    expect(policy.overBudget("b", 0)).toBe(false);
    expect(policy.overBudget("b", 1_001)).toBe(false);
    expect(policy.overBudget("b", 1_900)).toBe(true);
  });

  it("keeps a moved namespace while its steps pass the budget, and names it quiet after the quiet time", () => {
    const policy = new OverflowPolicy(options);
    policy.moved("a", 0);
    expect(policy.inOverflow("a")).toBe(true);
    expect(policy.overBudget("a", 900)).toBe(false);
    expect(policy.quiet(1_800)).toEqual([]);
    expect(policy.quiet(1_901)).toEqual(["a"]);
    policy.returned("a", 1_901);
    expect(policy.inOverflow("a")).toBe(false);
    expect(policy.size).toBe(0);
  });

  it("keeps a namespace that comes back soon after it returned twice as long each time, up to its cap", () => {
    const policy = new OverflowPolicy(options);
    policy.moved("a", 0);
    expect(policy.stayMs("a")).toBe(1_000);
    policy.returned("a", 1_001);
    // Moved again within the stay it had: stays 2 s, then 4 s.
    policy.moved("a", 1_500);
    expect(policy.stayMs("a")).toBe(2_000);
    expect(policy.quiet(3_400)).toEqual([]);
    expect(policy.quiet(3_501)).toEqual(["a"]);
    policy.returned("a", 3_501);
    policy.moved("a", 5_000);
    expect(policy.stayMs("a")).toBe(4_000);
    for (let i = 0; i < 10; i++) {
      policy.returned("a", 0);
      policy.moved("a", 0);
    }
    expect(policy.stayMs("a")).toBe(MAX_STAY_FACTOR * 1_000);
    // Back longer than its last stay: the next move starts again from the quiet time.
    policy.returned("a", 0);
    policy.moved("a", MAX_STAY_FACTOR * 1_000 + 1);
    expect(policy.stayMs("a")).toBe(1_000);
    expect(policy.stayMs("b")).toBeNull();
  });

  it("moves no namespace past the overflow worker's cap, and bounds the strikes it remembers", () => {
    const policy = new OverflowPolicy(options);
    for (let i = 0; i < MAX_OVERFLOW_NAMESPACES; i++) policy.moved(`n${i}`, 0);
    expect(policy.overBudget("late", 0)).toBe(false);
    expect(policy.overBudget("late", 10)).toBe(false);
    expect(policy.inOverflow("late")).toBe(false);
    // Strikes of as many namespaces again, long ago, are forgotten rather than kept.
    const strikes = new OverflowPolicy(options);
    for (let i = 0; i < MAX_OVERFLOW_NAMESPACES + 10; i++) strikes.overBudget(`s${i}`, i < 10 ? 0 : 5_000);
    expect(strikes.overBudget("s0", 5_100)).toBe(false);
    expect(strikes.overBudget("z", 5_200)).toBe(false);
    expect(strikes.overBudget("z", 5_300)).toBe(true);
  });
});
