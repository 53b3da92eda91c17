import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { tempDir } from "../test/helpers.js";
import { defaultMaxOpenNamespaces, defaultMaxSockets } from "./open-file-limit.js";

// The caps that keep the descriptors a process may open from running out: the open namespaces
// (7 each) and the sockets share what the soft limit allows, 256 kept for the rest.

function limitsFile(soft: string): string {
  const file = join(tempDir(), "limits");
  writeFileSync(
    file,
    `Limit                     Soft Limit           Hard Limit           Units\nMax open files            ${soft}                ${soft}                files\n`,
  );
  return file;
}

describe("the descriptor limit", () => {
  it("shares a high limit: 1,000 namespaces, and the rest for sockets", () => {
    const file = limitsFile("20000");
    expect(defaultMaxOpenNamespaces(file)).toBe(1_000);
    expect(defaultMaxSockets(1_000, file)).toBe(20_000 - 256 - 7_000);
  });

  it("keeps room for 64 sockets under a low limit", () => {
    const file = limitsFile("1024");
    expect(defaultMaxOpenNamespaces(file)).toBe(109);
    expect(defaultMaxSockets(109, file)).toBe(64);
    expect(defaultMaxSockets(10, file)).toBe(1024 - 256 - 70);
  });

  it("sets no socket cap where the limit is unlimited or cannot be read", () => {
    expect(defaultMaxSockets(1_000, limitsFile("unlimited"))).toBeNull();
    expect(defaultMaxOpenNamespaces(limitsFile("unlimited"))).toBe(1_000);
    expect(defaultMaxSockets(1_000, join(tempDir(), "missing"))).toBeNull();
  });
});
