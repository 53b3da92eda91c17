import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const BENCH = fileURLToPath(new URL("../bench/ingest.mjs", import.meta.url));

describe("pnpm bench ingest", () => {
  it("runs end to end at small sizes and ends with one JSON object of every figure", () => {
    const run = spawnSync(
      process.execPath,
      [BENCH, "--snapshot-rows", "2000", "--changes", "2000", "--rounds", "1", "--wake-rounds", "3"],
      { encoding: "utf8", timeout: 60_000 },
    );
    expect(run.status, run.stderr).toBe(0);
    const last = run.stdout.trim().split("\n").at(-1)!;
    const figures = JSON.parse(last) as Record<string, number | string>;
    expect(figures).toMatchObject({ suite: "ingest", snapshotRows: 2000, changesPerRound: 2000 });
    for (const name of [
      "changesPerSec",
      "snapshotRowsPerSec",
      "notifyToWakeP95Ms",
      "inProcessChangesPerSec",
      "inProcessSnapshotRowsPerSec",
    ]) {
      expect(figures[name]).toBeGreaterThan(0);
    }
  });
});
