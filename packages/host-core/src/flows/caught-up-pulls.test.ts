import type { PullResult } from "@weir/engine-wasm";
import { describe, expect, it } from "vitest";
import { CaughtUpPulls } from "./caught-up-pulls.js";

const answered = (watermark: number, unchanged = false): PullResult =>
  ({ body: "{}", cookie: watermark, watermark, floor: 0, unchanged, more: false }) as unknown as PullResult;

describe("CaughtUpPulls.behind", () => {
  it("is sure of a null cookie and of one below the watermark remembered, of nothing once forgotten", () => {
    const pulls = new CaughtUpPulls();
    expect(pulls.behind(null)).toBe(true);
    expect(pulls.behind(0)).toBe(false);
    pulls.remember("native", "g", "u", answered(5));
    expect(pulls.behind(4)).toBe(true);
    expect(pulls.behind(5)).toBe(false);
    // A transaction may move the watermark: nothing is known until the engine answers again.
    pulls.forget();
    expect(pulls.behind(4)).toBe(false);
    expect(pulls.behind(null)).toBe(true);
  });
});
