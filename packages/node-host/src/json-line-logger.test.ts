import { describe, expect, it } from "vitest";
import { jsonLineLogger } from "./json-line-logger.js";

function recorder() {
  const writes: string[] = [];
  return { writes, write: (text: string) => writes.push(text) };
}

describe("jsonLineLogger", () => {
  it("writes the lines that came within a moment in a single write, each a JSON object", async () => {
    const out = recorder();
    const logger = jsonLineLogger(out, recorder());
    logger.log("info", { msg: "a", n: 1 });
    await new Promise((resolve) => setImmediate(resolve));
    logger.log("warn", { msg: "b" });
    expect(out.writes).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(out.writes).toHaveLength(1);
    const lines = out.writes[0]!.trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(lines).toEqual([
      expect.objectContaining({ level: "info", msg: "a", n: 1, time: expect.any(String) }),
      expect.objectContaining({ level: "warn", msg: "b" }),
    ]);
  });

  it("writes errors at once, after the lines that waited", () => {
    const out = recorder();
    const errors = recorder();
    const logger = jsonLineLogger(out, errors);
    logger.log("info", { msg: "before" });
    logger.log("error", { msg: "broken" });
    expect(out.writes).toHaveLength(1);
    expect(JSON.parse(out.writes[0]!)).toMatchObject({ msg: "before" });
    expect(JSON.parse(errors.writes[0]!)).toMatchObject({ level: "error", msg: "broken" });
  });

  it("writes at once when many lines wait", () => {
    const out = recorder();
    const logger = jsonLineLogger(out, recorder());
    for (let i = 0; i < 1000; i++) logger.log("info", { msg: "x".repeat(100), i });
    expect(out.writes.length).toBeGreaterThan(0);
    const written = out.writes.join("").split("\n").filter(Boolean);
    expect(written.length).toBeGreaterThan(500);
    expect(written.length).toBeLessThan(1000);
    logger.flush();
    expect(out.writes.join("").split("\n").filter(Boolean)).toHaveLength(1000);
  });

  it("flushes on demand", () => {
    const out = recorder();
    const logger = jsonLineLogger(out, recorder());
    logger.log("info", { msg: "x" });
    logger.flush();
    expect(out.writes).toHaveLength(1);
    logger.flush();
    expect(out.writes).toHaveLength(1);
  });
});
