import { describe, expect, it } from "vitest";
import { formatZeroCookie, nextZeroCookie, parseZeroCookie } from "./zero-cookie.js";

describe("Zero cookies", () => {
  it("order as strings as their versions and steps order as numbers", () => {
    const cookies = [
      { version: 0, step: 0 },
      { version: 0, step: 9 },
      { version: 0, step: 10 },
      { version: 9, step: 0 },
      { version: 10, step: 0 },
      { version: 2 ** 40, step: 3 },
    ].map(formatZeroCookie);
    expect([...cookies].sort()).toEqual(cookies);
    for (const text of cookies) expect(formatZeroCookie(parseZeroCookie(text)!)).toBe(text);
  });

  it("refuses text weir does not hand out", () => {
    for (const text of ["", "57", "0000000000000057", "0000000000000057.0", "x000000000000057.00000000"]) {
      expect(parseZeroCookie(text)).toBeNull();
    }
  });

  it("steps within a version and starts again at a newer one", () => {
    expect(nextZeroCookie(null, 5)).toEqual({ version: 5, step: 0 });
    expect(nextZeroCookie({ version: 5, step: 2 }, 5)).toEqual({ version: 5, step: 3 });
    expect(nextZeroCookie({ version: 5, step: 2 }, 7)).toEqual({ version: 7, step: 0 });
  });
});
