import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { ProgressLine } from "./progress-line.js";

function stream(isTTY: boolean) {
  const out = new PassThrough() as PassThrough & { isTTY?: boolean; columns?: number };
  out.isTTY = isTTY;
  out.columns = 40;
  let text = "";
  out.setEncoding("utf8").on("data", (chunk: string) => {
    text += chunk;
  });
  return { out, text: () => text };
}

describe("ProgressLine", () => {
  it("redraws one line in place on a terminal and clears it when stopped", async () => {
    const { out, text } = stream(true);
    let n = 0;
    const line = new ProgressLine(out, () => `step ${++n} ${"x".repeat(100)}`, 5).start();
    await new Promise((resolve) => setTimeout(resolve, 40));
    line.stop();
    await new Promise((resolve) => setImmediate(resolve));
    const written = text();
    expect(written).toContain("\r\x1b[2Kstep 1 ");
    expect(written).not.toContain("\n");
    expect(written.endsWith("\r\x1b[2K")).toBe(true);
    // Never wider than the terminal.
    for (const frame of written.split("\r\x1b[2K").filter(Boolean))
      expect(frame.length).toBeLessThanOrEqual(39);
  });

  it("writes nothing when the stream is not a terminal", async () => {
    const { out, text } = stream(false);
    const line = new ProgressLine(out, () => "never", 5).start();
    await new Promise((resolve) => setTimeout(resolve, 30));
    line.stop();
    expect(text()).toBe("");
  });
});
