import { describe, expect, it } from "vitest";
import { headerUser, testService } from "../../test/test-host.js";
import type { WeirConfig } from "../config/weir-config.js";
import { MutatorError } from "../mutators/mutator-error.js";

// A push that outlasts `pushSliceMs` is committed a slice at a time, the event loop having its
// turn between slices. A slice runs at least 32 mutations: with `pushSliceMs: 0`, exactly 32.

const effects: string[] = [];
let explosions = 0;
const config: WeirConfig = {
  schema: { tables: { note: { columns: { id: "string", text: "string" }, primaryKey: ["id"] } } },
  mutators: {
    put(tx, args: { id: string; text: string }) {
      tx.upsert("note", args);
      tx.defer(() => {
        effects.push(`put ${args.id}`);
      });
    },
    putThenRefuse(tx, args: { id: string }) {
      tx.insert("note", { id: args.id, text: "never" });
      throw new MutatorError("no");
    },
    /** Holds the thread at least 15 ms, as a mutation that writes a thousand rows may. */
    putSlowly(tx, args: { id: string; text: string }) {
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 15);
      tx.upsert("note", args);
    },
    /** Fails the server the first `explosions` times it runs (not an application error). */
    putOrFail(tx, args: { id: string; text: string }) {
      if (explosions-- > 0) throw new Error("the disk went away");
      tx.upsert("note", args);
    },
  },
  authenticate: headerUser,
};

const push = (mutations: Array<{ id: number; name: string; args?: unknown }>) => ({
  clientGroupID: "g",
  pushVersion: 1,
  mutations: mutations.map(({ id, name, args = {} }) => ({
    type: "custom",
    id,
    clientID: "c",
    name,
    args: [args],
  })),
});
const put = (id: number, name = "put") => ({ id, name, args: { id: `n${id}`, text: `note ${id}` } });
/** Puts of notes `from` to `to`. */
const puts = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => put(from + i));
const notes = (service: { store: { db: { query(sql: string, params: []): unknown[][] } } }) =>
  service.store.db.query("SELECT id FROM note ORDER BY length(id), id", []).map((row) => row[0]);
const names = (from: number, to: number) => puts(from, to).map((p) => p.args.id);
const results = (body: string | null) =>
  JSON.parse(body!).pushResponse.mutations.map((m: { result: unknown }) => m.result);

describe("a push in slices", () => {
  it("commits each slice as a version of its own, answering every mutation once", async () => {
    effects.length = 0;
    const { service } = await testService({ ...config, pushSliceMs: 0 });
    // 70 mutations: slices of 32, 32 and 6; the one refused is in the second.
    const result = await service.push(
      "native",
      push([...puts(1, 39), { id: 40, name: "putThenRefuse", args: { id: "x" } }, ...puts(41, 70)]),
      { userID: "u" },
    );
    const expected = Array.from({ length: 70 }, (_, i) => (i === 39 ? { error: "app", message: "no" } : {}));
    expect(results(result.response.body)).toEqual(expected);
    expect(result.log).toMatchObject({ mutations: 70, idsAdvanced: 70, appErrors: 1, pushSlices: 3 });
    expect(notes(service)).toEqual([...names(1, 39), ...names(41, 70)]);
    expect(service.engine.state(service.store.db).watermark).toBe(3);
    expect(service.contexts.admin.counters).toMatchObject({ pushes: 1, mutations: 69, appErrors: 1 });
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(effects).toEqual([...names(1, 39), ...names(41, 70)].map((id) => `put ${id}`));
  });

  it("slices a push of few mutations that each hold the thread long, none past 40 ms but its last mutation", async () => {
    const { service } = await testService({ ...config, pushSliceMs: 10 });
    // Ten mutations of at least 15 ms each: a slice ends once it ran 40 ms, so at most 3 a slice.
    const result = await service.push("native", push(puts(1, 10).map((p) => ({ ...p, name: "putSlowly" }))), {
      userID: "u",
    });
    expect(results(result.response.body)).toEqual(Array.from({ length: 10 }, () => ({})));
    const slices = (result.log as { pushSlices?: number }).pushSlices ?? 1;
    expect(slices).toBeGreaterThanOrEqual(4);
    expect(notes(service)).toEqual(names(1, 10));
    expect(service.engine.state(service.store.db).watermark).toBe(slices);
  });

  it("commits a push of at most 32 ordinary mutations as one version, however long its slices may be", async () => {
    const { service } = await testService({ ...config, pushSliceMs: 0 });
    const result = await service.push("native", push(puts(1, 32)), { userID: "u" });
    expect(results(result.response.body)).toHaveLength(32);
    expect(result.log).not.toHaveProperty("pushSlices");
    expect(service.engine.state(service.store.db).watermark).toBe(1);
  });

  it("answers another namespace's request between its slices", async () => {
    const { service: big } = await testService({ ...config, pushSliceMs: 0 });
    const { service: other } = await testService(config);
    const mutations = Array.from({ length: 200 }, (_, i) => put(i + 1));
    const pushed = big.push("native", push(mutations), { userID: "u" });
    // A request that arrives once the push has begun: answered in one of its turns.
    const seen = new Promise<number>((resolve) =>
      setTimeout(async () => {
        await other.push("native", push([put(1)]), { userID: "v" });
        resolve(big.engine.state(big.store.db).watermark);
      }, 0),
    );
    const bigAtOther = await seen;
    await pushed;
    // 200 mutations are 7 slices of 32 (the last of 8): the other request came between two.
    expect(bigAtOther).toBeGreaterThan(0);
    expect(bigAtOther).toBeLessThan(7);
    expect(big.engine.state(big.store.db).watermark).toBe(7);
    expect(notes(big)).toHaveLength(200);
  });

  it("keeps the slices before a failure, and the push sent again applies the rest", async () => {
    const { service } = await testService({ ...config, pushSliceMs: 0 });
    // The failure is in the second slice: the first (1 to 32) is kept, nothing of the second.
    const batch = push([...puts(1, 39), put(40, "putOrFail"), ...puts(41, 50)]);
    explosions = 1;
    await expect(service.push("native", batch, { userID: "u" })).rejects.toThrow(/disk went away/);
    expect(notes(service)).toEqual(names(1, 32));
    const again = await service.push("native", batch, { userID: "u" });
    expect(results(again.response.body).map((r: { error?: string }) => r.error ?? "applied")).toEqual([
      ...Array(32).fill("alreadyProcessed"),
      ...Array(18).fill("applied"),
    ]);
    expect(notes(service)).toEqual(names(1, 50));
  });

  it("stops at an out-of-order id in a later slice, naming only what it did not process", async () => {
    const { service } = await testService({ ...config, pushSliceMs: 0 });
    const stopped = await service.push("native", push([...puts(1, 40), put(42), put(43)]), { userID: "u" });
    expect(JSON.parse(stopped.response.body!).pushResponse).toMatchObject({
      kind: "PushFailed",
      reason: "oooMutation",
      mutationIDs: [
        { clientID: "c", id: 42 },
        { clientID: "c", id: 43 },
      ],
    });
    expect(notes(service)).toEqual(names(1, 40));
    expect(service.engine.state(service.store.db).watermark).toBe(2);
  });

  it("refuses a negative slice", async () => {
    await expect(testService({ ...config, pushSliceMs: -1 })).rejects.toThrow(/pushSliceMs/);
  });
});
