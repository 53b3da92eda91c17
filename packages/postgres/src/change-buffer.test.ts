import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ChangeBuffer } from "./change-buffer.js";
import type { BufferedChange } from "./change-buffer-schema.js";
import { readNamespaceChanges } from "./read-namespace-changes.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function file(): string {
  const dir = mkdtempSync(join(tmpdir(), "weir-buffer-"));
  dirs.push(dir);
  return join(dir, "buffer.sqlite");
}

const identity = { slot: "s", publication: "p", configKey: "k1" };

function insert(id: number, tenant: string | null = null): BufferedChange {
  return {
    tableName: "t",
    op: "INSERT",
    rowJson: JSON.stringify({ id }),
    oldKeyJson: null,
    keyChanged: false,
    newTenant: tenant,
    oldTenant: null,
    shared: tenant === null,
  };
}

/** Commits one transaction and waits until it is durable, and so shown. */
async function commit(buffer: ChangeBuffer, watermark: bigint, ids: number[], now: number): Promise<void> {
  buffer.commit(
    [
      {
        watermark,
        xid: Number(watermark),
        endLsn: watermark + 8n,
        changes: ids.map((id) => insert(id)),
        firstSeq: 0,
        total: ids.length,
      },
    ],
    now,
  );
  await buffer.sync();
}

describe("ChangeBuffer", async () => {
  it("prunes whole transactions by age and by count, raising the floor to the newest pruned", async () => {
    const buffer = new ChangeBuffer(file(), identity);
    buffer.initialize(100n);
    await commit(buffer, 110n, [1, 2], 1_000);
    await commit(buffer, 120n, [3], 2_000);
    await commit(buffer, 130n, [4, 5, 6], 3_000);
    expect(buffer.prune({ maxAgeMs: 1_500, maxChanges: 100 }, 3_000)).toBe(2);
    expect(buffer.floor).toBe(110n);
    // Count: the newest 3 changes stay; a transaction is never split.
    expect(buffer.prune({ maxAgeMs: 1e9, maxChanges: 3 }, 3_000)).toBe(1);
    expect(buffer.floor).toBe(120n);
    expect(buffer.prune({ maxAgeMs: 1e9, maxChanges: 2 }, 3_000)).toBe(3);
    expect(buffer.floor).toBe(130n);
    expect(buffer.stats()).toMatchObject({ changes: 0, transactions: 0 });
    buffer.close();
  });

  it("keeps pending parts of a transaction out of reads until its commit, and drops them after a crash", async () => {
    const path = file();
    const buffer = new ChangeBuffer(path, identity);
    buffer.initialize(100n);
    await commit(buffer, 110n, [1], 0);
    buffer.writePending(120n, 0, [insert(2), insert(3)]);
    expect(readNamespaceChanges(buffer, undefined, 100n, 10).changes).toHaveLength(1);
    buffer.close();
    const reopened = new ChangeBuffer(path, identity);
    reopened.discardPending();
    reopened.commit(
      [{ watermark: 120n, xid: 1, endLsn: 128n, changes: [insert(4)], firstSeq: 0, total: 1 }],
      0,
    );
    await reopened.sync();
    expect(readNamespaceChanges(reopened, undefined, 110n, 10).changes.map((c) => c.rowData)).toEqual([
      { id: 4 },
    ]);
    expect(reopened.resumeLsn()).toBe(128n);
    reopened.close();
  });

  it("refuses another slot's buffer, and drops rows encoded under other options", async () => {
    const path = file();
    const buffer = new ChangeBuffer(path, identity);
    buffer.initialize(100n);
    await commit(buffer, 110n, [1], 0);
    buffer.close();
    expect(() => new ChangeBuffer(path, { ...identity, slot: "other" })).toThrow(/belongs to slot s/);
    const changed = new ChangeBuffer(path, { ...identity, configKey: "k2" });
    expect(changed.resetReason).toContain("changed");
    // Above every cursor a namespace could hold (the head, 110, and the stream's end less one,
    // 117), so caught-up namespaces resnapshot too; snapshots then stand at the floor.
    expect(changed.floor).toBe(118n);
    expect(changed.snapshotStart).toBe(118n);
    expect(changed.through).toBe(118n);
    expect(changed.stats().changes).toBe(0);
    // The head stays: a commit at the floor itself is still buffered, and read after it.
    expect(changed.writtenHead).toBe(110n);
    await commit(changed, 130n, [2], 0);
    expect(readNamespaceChanges(changed, undefined, 118n, 10).changes.map((c) => c.rowData)).toEqual([
      { id: 2 },
    ]);
    changed.close();
  });

  it("answers whole transactions: the limit is passed to finish one, and a page never ends inside one", async () => {
    const buffer = new ChangeBuffer(file(), identity);
    buffer.initialize(100n);
    await commit(buffer, 110n, [1, 2, 3], 0);
    await commit(buffer, 120n, [4], 0);
    const first = readNamespaceChanges(buffer, undefined, 100n, 2);
    expect(first.watermark).toBe(110n);
    expect(first.changes).toHaveLength(3);
    // Caught up, a page stands where the newest commit record ends (less one): the next commit's
    // watermark lies above it.
    expect(readNamespaceChanges(buffer, undefined, 110n, 2)).toEqual({
      watermark: 127n,
      changes: [{ watermark: 120n, tableName: "t", op: "INSERT", rowData: { id: 4 }, oldData: null }],
    });
    buffer.close();
  });
  it("stands through a keepalive with nothing left to buffer, so a commit at that position still comes after", async () => {
    const path = file();
    const buffer = new ChangeBuffer(path, identity);
    buffer.initialize(100n);
    await commit(buffer, 110n, [1], 0);
    expect(buffer.through).toBe(117n);
    buffer.advance(200n);
    await buffer.sync();
    expect(buffer.through).toBe(199n);
    expect(readNamespaceChanges(buffer, undefined, 110n, 10)).toEqual({ watermark: 199n, changes: [] });
    // An earlier keepalive never moves it back.
    buffer.advance(150n);
    await buffer.sync();
    expect(buffer.through).toBe(199n);
    buffer.close();
    const reopened = new ChangeBuffer(path, identity);
    expect(reopened.through).toBe(199n);
    expect(reopened.resumeLsn()).toBe(200n);
    // The next commit record may start exactly where the stream was: it is above the cursor.
    await commit(reopened, 200n, [2], 0);
    expect(readNamespaceChanges(reopened, undefined, 199n, 10).changes.map((c) => c.rowData)).toEqual([
      { id: 2 },
    ]);
    reopened.close();
  });

  it("shows a commit to readers and to PostgreSQL only once it is durable", async () => {
    const path = file();
    const buffer = new ChangeBuffer(path, identity);
    buffer.initialize(100n);
    await commit(buffer, 110n, [1], 0);
    buffer.commit(
      [{ watermark: 120n, xid: 2, endLsn: 128n, changes: [insert(2)], firstSeq: 0, total: 1 }],
      0,
    );
    // Written (the reader skips it if PostgreSQL sends it again), not yet durable.
    expect(buffer.writtenHead).toBe(120n);
    expect(buffer.resumeLsn()).toBe(128n);
    expect(buffer.head).toBe(110n);
    expect(buffer.through).toBe(117n);
    expect(buffer.durableLsn()).toBe(118n);
    expect(readNamespaceChanges(buffer, undefined, 110n, 10)).toEqual({ watermark: 117n, changes: [] });
    buffer.advance(200n);
    const synced = buffer.sync();
    expect(buffer.through).toBe(117n);
    await synced;
    expect(buffer.head).toBe(120n);
    expect(buffer.through).toBe(199n);
    expect(buffer.durableLsn()).toBe(200n);
    expect(readNamespaceChanges(buffer, undefined, 110n, 10).changes.map((c) => c.rowData)).toEqual([
      { id: 2 },
    ]);
    buffer.close();
  });

  it("gives pruned pages back to the file system: the file shrinks after pruning", async () => {
    const path = file();
    const buffer = new ChangeBuffer(path, identity);
    buffer.initialize(100n);
    const ids = Array.from({ length: 2_000 }, (_, i) => i);
    for (let tx = 1; tx <= 20; tx++) await commit(buffer, 100n + BigInt(tx) * 10n, ids, 1_000);
    // Closing checkpoints the WAL into the file.
    buffer.close();
    const full = statSync(path).size;
    const reopened = new ChangeBuffer(path, identity);
    expect(reopened.prune({ maxAgeMs: 1_000_000, maxChanges: 0 }, 2_000)).toBe(40_000);
    reopened.close();
    expect(statSync(path).size).toBeLessThan(full / 4);
  });
});
