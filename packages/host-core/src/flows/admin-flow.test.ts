import { describe, expect, it } from "vitest";
import { headerUser, memoryStore, testService } from "../../test/test-host.js";
import type { WeirConfig } from "../config/weir-config.js";

const config: WeirConfig = {
  schema: { tables: { note: { columns: { id: "string", owner: "string" }, primaryKey: ["id"] } } },
  mutators: {
    put(tx, args: { id: string }) {
      tx.upsert("note", { id: args.id, owner: tx.claims.userID });
    },
  },
  authenticate: headerUser,
  visibility: (claims) => ({ note: { sql: "owner = ?", params: [claims.userID] } }),
  retainChanges: 1_000,
};

const json = (result: { response: { body: string | null } }) => JSON.parse(result.response.body!);

describe("the admin flow", () => {
  it("stores each knob before it answers, and answers status from them", async () => {
    const { service } = await testService(config);
    expect(json(service.admin("writer", "POST", { enabled: false }))).toEqual({ enabled: false });
    expect(json(service.admin("fault", "POST", { point: "pull_during_tx", kind: "quota" }))).toEqual({
      faults: { pull_during_tx: "quota" },
    });
    expect(json(service.admin("drop-next-push-response", "POST", undefined))).toEqual({
      dropNextPushResponse: true,
    });
    const stored = service.store.db.query("SELECT key, value FROM _weir_host_control ORDER BY key", []);
    expect(Object.fromEntries(stored.map(([key, value]) => [key, JSON.parse(String(value))]))).toMatchObject({
      writerEnabled: false,
      faults: { pull_during_tx: "quota" },
      dropNextPushResponse: true,
    });
    expect(json(service.admin("status", "GET", undefined))).toMatchObject({
      writer: { enabled: false },
      faults: { pull_during_tx: "quota" },
      dropNextPushResponse: true,
      retainChanges: 1_000,
      caps: { maxChangeRows: 10_000, maxChangeBytes: 2_000_000 },
    });
    expect(json(service.admin("fault", "POST", { clear: true }))).toEqual({ faults: {} });
  });

  it("switches query-aware pull off and on, kept across a reopen of the namespace", async () => {
    const store = memoryStore();
    const queries = { all: () => ({ table: "note" }) };
    const { service } = await testService({ ...config, queries }, { store });
    expect(json(service.admin("queries", "POST", { enabled: false }))).toEqual({ enabled: false });
    const body = {
      clientGroupID: "g",
      clientID: "c",
      cookie: null,
      queries: { patch: [{ op: "put", hash: "h", name: "all" }] },
    };
    expect(() => service.pull("native", body, { userID: "u" })).toThrow(
      expect.objectContaining({ code: "queries_disabled" }),
    );
    const reopened = (await testService({ ...config, queries }, { store })).service;
    expect(json(reopened.admin("status", "GET", undefined))).toMatchObject({ queries: { enabled: false } });
    reopened.admin("queries", "POST", { enabled: true });
    expect(JSON.parse(reopened.pull("native", body, { userID: "u" }).response.body!)).toMatchObject({
      gotQueries: ["h"],
    });
  });

  it("prunes at once to a new retention", async () => {
    const { service } = await testService(config);
    for (let i = 0; i < 5; i++)
      await service.push(
        "native",
        {
          clientGroupID: "g",
          pushVersion: 1,
          mutations: [{ type: "custom", id: i + 1, clientID: "c", name: "put", args: [{ id: `n${i}` }] }],
        },
        { userID: "u" },
      );
    const answer = json(service.admin("retention", "POST", { retainChanges: 2 }));
    expect(answer).toMatchObject({ retainChanges: 2, pruned: { floor: 3 } });
    expect(service.contexts.admin.retainChanges()).toBe(2);
  });

  it("resets every client when visibility is switched, and wakes them", async () => {
    const { service, woken, scheduler } = await testService(config);
    const before = service.engine.state(service.store.db).floor;
    expect(json(service.admin("visibility", "POST", { enabled: false }))).toEqual({
      enabled: false,
      invalidated: true,
    });
    expect(service.engine.state(service.store.db).floor).toBeGreaterThan(before);
    expect(service.contexts.pull.visibilityFor({ userID: "u" })).toBeUndefined();
    expect(json(service.admin("visibility", "POST", { enabled: false }))).toEqual({
      enabled: false,
      invalidated: false,
    });
    await new Promise((resolve) => setTimeout(resolve, 40));
    expect(woken).toHaveLength(1);
    scheduler.close();
  });

  it("refuses a malformed knob with 400 and changes nothing", async () => {
    const { service } = await testService(config);
    expect(() => service.admin("retention", "POST", { retainChanges: -1 })).toThrow(
      expect.objectContaining({ code: "bad_request" }),
    );
    expect(() => service.admin("invalidate", "POST", { surprise: 1 })).toThrow(
      expect.objectContaining({ status: 400 }),
    );
    expect(service.contexts.admin.retainChanges()).toBe(1_000);
  });
});
