import { describe, expect, it } from "vitest";
import { logLine } from "./logger.js";

describe("logLine", () => {
  it("is one JSON object: level, an ISO time, then the fields", () => {
    const before = Date.now();
    const line = logLine("warn", { msg: "m", n: 2, nested: { a: [1] } });
    const parsed = JSON.parse(line);
    expect(Object.keys(parsed)).toEqual(["level", "time", "msg", "n", "nested"]);
    expect(parsed).toMatchObject({ level: "warn", msg: "m", n: 2, nested: { a: [1] } });
    expect(Date.parse(parsed.time)).toBeGreaterThanOrEqual(before);
    expect(parsed.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(line).not.toContain("\n");
  });

  it("stays valid JSON without fields", () => {
    expect(JSON.parse(logLine("info", {}))).toEqual({ level: "info", time: expect.any(String) });
  });
});
