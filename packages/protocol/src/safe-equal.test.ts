import { describe, expect, it } from "vitest";
import { safeEqual } from "./safe-equal.js";

describe("safeEqual", () => {
  it("is true for equal strings only", () => {
    expect(safeEqual("secret", "secret")).toBe(true);
    expect(safeEqual("", "")).toBe(true);
    expect(safeEqual("secret", "secreT")).toBe(false);
    expect(safeEqual("secret", "secret ")).toBe(false);
    expect(safeEqual("secret\0", "secret")).toBe(false);
    expect(safeEqual("", "x")).toBe(false);
    expect(safeEqual("é", "e\u0301")).toBe(false);
  });
});
