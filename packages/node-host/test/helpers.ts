import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Logger } from "@weir/host-core";

/** Keeps what a server logs, for tests that read it, and keeps test output quiet. */
export function memoryLogger(): Logger & { lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  return {
    lines,
    log(level, fields) {
      lines.push({ level, ...fields });
    },
  };
}

export function tempDir(prefix = "weir-test-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}
