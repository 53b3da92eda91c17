import { describe, expect, it } from "vitest";
import { ERROR_STATUS } from "./error-codes.js";

describe("ERROR_STATUS", () => {
  it("gives every code a client (4xx) or server (5xx) status", () => {
    for (const [code, status] of Object.entries(ERROR_STATUS)) {
      expect(code).toMatch(/^[a-z_]+$/);
      expect(status >= 400 && status < 600, `${code}: ${status}`).toBe(true);
    }
    expect(ERROR_STATUS.unsupported_version).toBe(400);
  });
});
