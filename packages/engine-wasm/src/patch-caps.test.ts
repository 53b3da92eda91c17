import { describe, expect, it } from "vitest";
import { checkPatchCaps } from "./work-meter.js";

/** A put whose arguments count how often they are encoded. */
function counted(hash: string, bytes: number, encodes: { count: number }) {
  return {
    op: "put" as const,
    hash,
    args: {
      toJSON() {
        encodes.count++;
        return "x".repeat(bytes - 2);
      },
    },
  };
}

describe("a whole patch checked against a group's caps", () => {
  it("counts each hash once, by its last put", () => {
    const encodes = { count: 0 };
    const patch = [counted("a", 900, encodes), counted("b", 50, encodes), counted("a", 100, encodes)];
    expect(() => checkPatchCaps(patch, { maxGroupQueries: 2, maxGroupQueryBytes: 150 })).not.toThrow();
    expect(() => checkPatchCaps(patch, { maxGroupQueries: 1 })).toThrow(
      /the patch puts 2 queries, more than a group may hold \(1, the server's maxGroupQueries\)/,
    );
    expect(() => checkPatchCaps(patch, { maxGroupQueryBytes: 149 })).toThrow(/maxGroupQueryBytes/);
    // A del changes nothing of what the patch's puts store.
    expect(() => checkPatchCaps([...patch, { op: "del" }], { maxGroupQueryBytes: 150 })).not.toThrow();
  });

  it("stops encoding arguments at the put that passes the bytes cap", () => {
    const encodes = { count: 0 };
    const patch = Array.from({ length: 300 }, (_, i) => counted(`q${i}`, 10_000, encodes));
    expect(() => checkPatchCaps(patch, { maxGroupQueryBytes: 1024 * 1024 })).toThrow(
      expect.objectContaining({ code: "query_budget_exceeded" }),
    );
    // 105 puts of 10,000 bytes pass 1 MiB: the 195 others are never encoded.
    expect(encodes.count).toBe(105);
  });
});
