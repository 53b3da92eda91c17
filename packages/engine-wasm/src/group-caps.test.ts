import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { channelMessages, chatSchema } from "../test/chat.js";
import { DATABASES, testEngine } from "../test/databases.js";
import { Namespace } from "../test/fixtures.js";
import { checkPatchCaps } from "./group-caps.js";
import type { QueryPatchOp } from "./types.js";

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
    expect(() =>
      checkPatchCaps([...patch, { op: "del" as const, hash: "z" }], { maxGroupQueryBytes: 150 }),
    ).not.toThrow();
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

const capOp = fc.oneof(
  fc.record({
    op: fc.constant("put" as const),
    hash: fc.constantFrom("h0", "h1", "h2", "h3", "h4"),
    size: fc.nat(40),
  }),
  fc.record({ op: fc.constant("del" as const), hash: fc.constantFrom("h0", "h1", "h2", "h3", "h4") }),
  fc.record({ op: fc.constant("clear" as const) }),
);
const ast = channelMessages("c1", 1);
const asPatch = (ops: ReadonlyArray<{ op: string; hash?: string; size?: number }>): QueryPatchOp[] =>
  ops.map((op) =>
    op.op === "put"
      ? { op: "put", hash: op.hash!, name: "q", args: ["x".repeat(op.size!)], ast }
      : op.op === "del"
        ? { op: "del", hash: op.hash! }
        : { op: "clear" },
  );

// The check a host makes before it applies a patch in steps refuses exactly the patches the
// engine refuses for the caps when it applies them whole, from what the group holds.
describe.each(DATABASES)("a patch checked against what the group holds, on $kind", ({ open }) => {
  it("is refused exactly when the engine's pull refuses it", async () => {
    const engine = await testEngine();
    let refusals = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(capOp, { maxLength: 5 }),
        fc.array(capOp, { maxLength: 8 }),
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 10, max: 200 }),
        async (held, patch, maxGroupQueries, maxGroupQueryBytes) => {
          const ns = new Namespace(engine, open(), chatSchema);
          ns.pull({ cookie: null, queries: { patch: asPatch(held) } });
          const caps = { clientGroupID: "g", userID: "u", maxGroupQueries, maxGroupQueryBytes };
          let checked: unknown = null;
          try {
            engine.checkGroupCaps(ns.db.adapter, caps, asPatch(patch));
          } catch (error) {
            checked = error;
          }
          let pulled: unknown = null;
          try {
            ns.pull({ ...caps, cookie: null, queries: { patch: asPatch(patch) } });
          } catch (error) {
            pulled = error;
          }
          expect(checked === null).toBe(pulled === null);
          if (checked !== null) {
            refusals++;
            // The same refusal (the pull may say it first of the patch alone, checkPatchCaps).
            expect(checked).toMatchObject({ code: "query_budget_exceeded" });
            expect(pulled).toMatchObject({ code: "query_budget_exceeded" });
          }
          // Another user's group counts as an empty one here (its pull is refused as another's).
          const refuses = (input: typeof caps) => {
            try {
              engine.checkGroupCaps(ns.db.adapter, input, asPatch(patch));
              return false;
            } catch {
              return true;
            }
          };
          expect(refuses({ ...caps, userID: "v" })).toBe(refuses({ ...caps, clientGroupID: "new" }));
          ns.db.close();
        },
      ),
      { numRuns: 150 },
    );
    expect(refusals).toBeGreaterThan(10);
  });
});
