import { readFile } from "node:fs/promises";
import { type Engine, engineWasmUrl, loadEngine, type Schema } from "@weir/engine-wasm";
import { betterSqliteAdapter } from "@weir/engine-wasm/better-sqlite3";
import { UpstreamCallError, type UpstreamSource } from "@weir/protocol";
import Database from "better-sqlite3";
import { beforeAll, describe, expect, it } from "vitest";
import { ScriptedUpstream } from "../../test/scripted-upstream.js";
import type { NamespaceStore } from "../ports/storage.js";
import { BreakerOpenError, type BreakerState, closedBreaker, IngestBreaker } from "./ingest-breaker.js";
import { type IngestPassInput, runIngestPass } from "./ingest-pass.js";

const schema = {
  tables: { item: { columns: { id: "string", n: "integer" }, primaryKey: ["id"] } },
} satisfies Schema;

let engine: Engine;
beforeAll(async () => {
  engine = await loadEngine(await WebAssembly.compile(await readFile(engineWasmUrl)));
});

function namespace() {
  const raw = new Database(":memory:");
  const run = raw.transaction((fn: () => unknown) => fn());
  const store: NamespaceStore = {
    db: betterSqliteAdapter(raw),
    transaction: <T>(fn: () => T) => run(fn) as T,
    close: () => raw.close(),
  };
  store.transaction(() => engine.install(store.db, schema));
  let breakerState: BreakerState = closedBreaker(0);
  let now = 1_000_000;
  const slept: number[] = [];
  const pass = (source: UpstreamSource, extra: Partial<IngestPassInput> = {}) =>
    runIngestPass({
      engine,
      store,
      schema,
      source,
      fence: 0,
      breaker: new IngestBreaker(breakerState, { rows: 1_000, windowMs: 60_000 }, (state) => {
        breakerState = state;
      }),
      now: () => now,
      monotonic: () => now,
      sleep: async (ms) => {
        slept.push(ms);
        now += ms;
      },
      random: () => 0,
      changesLimit: 2,
      pageRows: 400,
      ...extra,
    });
  const rows = () => store.db.query("SELECT id, n FROM item ORDER BY id", []);
  return { store, pass, rows, slept, breaker: () => breakerState, advance: (ms: number) => (now += ms) };
}

describe("runIngestPass", () => {
  it("snapshots a namespace that never synced, then follows the changes batch by batch", async () => {
    const upstream = new ScriptedUpstream();
    upstream.commit([
      { id: "a", n: 1 },
      { id: "b", n: 2 },
    ]);
    const ns = namespace();
    let committed = 0;
    const first = await ns.pass(upstream, { onCommitted: () => committed++ });
    expect(first).toMatchObject({
      outcome: "complete",
      cursorBefore: null,
      cursorAfter: "1",
      snapshot: null,
    });
    expect(ns.rows()).toEqual([
      ["a", 1],
      ["b", 2],
    ]);
    expect(committed).toBe(1);
    upstream.commit([{ id: "a", n: 10 }]);
    upstream.commit([{ id: "b" }, { id: "c", n: 3 }]);
    upstream.commit([{ id: "d", n: 4 }]);
    const second = await ns.pass(upstream, { onCommitted: () => committed++ });
    // changesLimit 2: three batches, the second one whole though it holds two changes.
    expect(second).toMatchObject({
      outcome: "complete",
      cursorBefore: "1",
      cursorAfter: "4",
      batches: 2,
      rows: 4,
    });
    expect(ns.rows()).toEqual([
      ["a", 10],
      ["c", 3],
      ["d", 4],
    ]);
    expect(committed).toBe(3);
  });

  it("resnapshots when its cursor is gone (410), clients keeping the old state until the swap", async () => {
    const upstream = new ScriptedUpstream();
    upstream.commit([{ id: "a", n: 1 }]);
    const ns = namespace();
    await ns.pass(upstream);
    upstream.commit([{ id: "a" }, { id: "z", n: 26 }]);
    upstream.oldest = 2;
    const result = await ns.pass(upstream);
    expect(result).toMatchObject({ outcome: "complete", cursorAfter: "2" });
    expect(ns.rows()).toEqual([["z", 26]]);
  });

  it("asks a failing snapshot page again with half as many rows, down to 100", async () => {
    const upstream = new ScriptedUpstream();
    upstream.commit(Array.from({ length: 250 }, (_, i) => ({ id: `r${String(i).padStart(3, "0")}`, n: i })));
    upstream.failures = [
      new UpstreamCallError(503, "busy", "busy"),
      new UpstreamCallError(502, "busy", "busy"),
      new UpstreamCallError(500, "busy", "busy"),
    ];
    const ns = namespace();
    const result = await ns.pass(upstream);
    expect(result.outcome).toBe("complete");
    expect(upstream.snapshotLimits).toEqual([100, 100, 100]);
    expect(ns.rows()).toHaveLength(250);
    // The third failure came at 100 rows: it waited a second instead.
    expect(ns.slept).toEqual([1_000]);
  });

  it("retries 429 and 5xx after a second doubled per attempt, a Retry-After winning, and stops at the budget", async () => {
    const upstream = new ScriptedUpstream();
    upstream.commit([{ id: "a", n: 1 }]);
    const ns = namespace();
    await ns.pass(upstream);
    upstream.commit([{ id: "b", n: 2 }]);
    upstream.failures = [
      new UpstreamCallError(503, "busy", "busy"),
      new UpstreamCallError(429, "slow", "slow down", 7_000),
      new UpstreamCallError(502, "down", "down"),
    ];
    const result = await ns.pass(upstream);
    expect(ns.slept).toEqual([1_000, 7_000, 4_000]);
    // Three failures, the batch, and the call that found it caught up.
    expect(result).toMatchObject({ outcome: "complete", cursorAfter: "2", attempts: 5 });
    upstream.commit([{ id: "c", n: 3 }]);
    upstream.failures = Array.from({ length: 5 }, () => new UpstreamCallError(503, "busy", "busy"));
    const gaveUp = await ns.pass(upstream, { budget: { maxAttempts: 2 } });
    expect(gaveUp).toMatchObject({ outcome: "pending_retry", cursorAfter: "2", error: "busy" });
    expect(gaveUp.retryAt).toBeGreaterThan(0);
    // Any other client error is no retry: the pass fails with it.
    const refusing: UpstreamSource = {
      changes: () => Promise.reject(new UpstreamCallError(400, "no", "no")),
      snapshotPage: upstream.snapshotPage.bind(upstream),
    };
    await expect(ns.pass(refusing)).rejects.toThrow("no");
  });

  it("stops at a row budget and resumes from the stored progress", async () => {
    const upstream = new ScriptedUpstream();
    upstream.commit([{ id: "a", n: 1 }]);
    const ns = namespace();
    await ns.pass(upstream);
    for (let i = 0; i < 6; i++) upstream.commit([{ id: `x${i}`, n: i }]);
    const partial = await ns.pass(upstream, { budget: { maxRows: 2 } });
    expect(partial).toMatchObject({ outcome: "pending_budget", cursorAfter: "3" });
    expect(await ns.pass(upstream)).toMatchObject({ outcome: "complete", cursorAfter: "7" });
    expect(ns.rows()).toHaveLength(7);
  });

  it("opens the breaker past the rows budget of its window, and keeps it open across passes", async () => {
    const upstream = new ScriptedUpstream();
    upstream.commit([{ id: "a", n: 1 }]);
    const ns = namespace();
    await ns.pass(upstream);
    for (let i = 0; i < 3; i++)
      upstream.commit(Array.from({ length: 400 }, (_, j) => ({ id: `b${i}-${j}`, n: j })));
    await expect(ns.pass(upstream, { changesLimit: 400 })).rejects.toBeInstanceOf(BreakerOpenError);
    expect(ns.breaker().open).toMatchObject({ reason: "budget_exceeded", trips: 1 });
    await expect(ns.pass(upstream)).rejects.toBeInstanceOf(BreakerOpenError);
    ns.advance(61_000);
    expect(await ns.pass(upstream, { changesLimit: 400 })).toMatchObject({ outcome: "complete" });
    expect(ns.breaker().open).toBeNull();
  });

  it("opens the breaker on a batch that does not move the cursor", async () => {
    const upstream = new ScriptedUpstream();
    upstream.commit([{ id: "a", n: 1 }]);
    const ns = namespace();
    await ns.pass(upstream);
    const stuck: UpstreamSource = {
      changes: async (after) => ({ watermark: after, changes: [upstream.log[0]!] }),
      snapshotPage: upstream.snapshotPage.bind(upstream),
    };
    await expect(ns.pass(stuck)).rejects.toBeInstanceOf(BreakerOpenError);
    expect(ns.breaker().open).toMatchObject({ reason: "cursor_stalled" });
  });
  it("asks for the next page while it applies a full one, and applies every page once, in order", async () => {
    const upstream = new ScriptedUpstream();
    upstream.commit([{ id: "a", n: 1 }]);
    const ns = namespace();
    await ns.pass(upstream);
    for (let i = 0; i < 6; i++)
      upstream.commit([
        { id: `k${i}`, n: i },
        { id: "a", n: 100 + i },
      ]);
    // Each call answers a turn later; a transaction that runs while one is out overlapped it.
    let outstanding = 0;
    let overlapped = 0;
    const slow: UpstreamSource = {
      changes: async (after, limit) => {
        outstanding++;
        await new Promise((resolve) => setImmediate(resolve));
        try {
          return await upstream.changes(after, limit);
        } finally {
          outstanding--;
        }
      },
      snapshotPage: (table, cursor, limit) => upstream.snapshotPage(table, cursor, limit),
    };
    const transaction = ns.store.transaction;
    ns.store.transaction = <T>(fn: () => T) => {
      if (outstanding > 0) overlapped++;
      return transaction(fn);
    };
    const result = await ns.pass(slow);
    expect(result).toMatchObject({ outcome: "complete", cursorAfter: "7", batches: 6 });
    expect(overlapped).toBeGreaterThan(0);
    expect(ns.rows()).toEqual([["a", 105], ...[0, 1, 2, 3, 4, 5].map((i) => [`k${i}`, i])]);
  });
});
