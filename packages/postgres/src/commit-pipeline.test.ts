import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ChangeBuffer } from "./change-buffer.js";
import { CommitPipeline } from "./commit-pipeline.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function buffer(): ChangeBuffer {
  const dir = mkdtempSync(join(tmpdir(), "weir-pipeline-"));
  dirs.push(dir);
  const opened = new ChangeBuffer(join(dir, "buffer.sqlite"), {
    slot: "s",
    publication: "p",
    configKey: "k",
  });
  opened.initialize(100n);
  return opened;
}

const transaction = (watermark: bigint) => ({
  watermark,
  xid: Number(watermark),
  endLsn: watermark + 8n,
  changes: [
    {
      tableName: "t",
      op: "INSERT" as const,
      rowJson: '{"id":1}',
      oldKeyJson: null,
      keyChanged: false,
      newTenant: null,
      oldTenant: null,
      shared: true,
    },
  ],
  firstSeq: 0,
  total: 1,
  tenants: new Set<string>(),
  shared: true,
});

/** A pipeline over a new buffer, with what it confirmed and woke (`seen`) and its failures. */
function pipelineOnBuffer() {
  const buffered = buffer();
  const seen: string[] = [];
  const failures: unknown[] = [];
  const pipeline = new CommitPipeline({
    buffer: buffered,
    retention: { maxAgeMs: 60_000, maxChanges: 1_000 },
    confirm: () => seen.push("confirm"),
    onCommitted: (batch) => seen.push(`woken ${batch.watermark}`),
    halted: () => false,
  });
  return { buffered, seen, failures, pipeline };
}

describe("CommitPipeline", () => {
  it("confirms, wakes and prunes once a flush is durable", async () => {
    const { buffered, seen, failures, pipeline } = pipelineOnBuffer();
    pipeline.committed(transaction(110n), (error) => failures.push(error));
    await pipeline.settle((error) => failures.push(error));
    expect(seen).toEqual(["confirm", "woken 110"]);
    expect(buffered.durableLsn()).toBe(118n);
    expect(failures).toEqual([]);
    buffered.close();
  });

  it("does nothing after its flush's fsync when the buffer was closed meanwhile (the reader stopped)", async () => {
    const { buffered, seen, failures, pipeline } = pipelineOnBuffer();
    pipeline.committed(transaction(110n), (error) => failures.push(error));
    // The flush runs on the next turn; the buffer closes while its fsync is under way.
    await new Promise((resolve) => setImmediate(resolve));
    buffered.close();
    await pipeline.settle((error) => failures.push(error));
    expect(seen).toEqual([]);
    expect(failures).toEqual([]);
  });
});
