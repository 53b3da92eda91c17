import { pullVisibilityIdentity } from "@weir/engine-wasm";
import { describe, expect, it } from "vitest";
import { headerUser, memoryStore, testService } from "../../test/test-host.js";
import type { WeirConfig } from "../config/weir-config.js";

const config: WeirConfig = {
  schema: { tables: { note: { columns: { id: "string" }, primaryKey: ["id"] } } },
  mutators: {
    put(tx, args: { id: string }) {
      tx.upsert("note", args);
    },
  },
  authenticate: headerUser,
  retainChanges: 3,
  wakeWindowMs: 0,
};

const push = (id: number) => ({
  clientGroupID: "g",
  pushVersion: 1,
  mutations: [{ type: "custom", id, clientID: "c", name: "put", args: [{ id: `n${id}` }] }],
});

describe("NamespaceService", () => {
  it("runs flows in one transaction, and answers no pull from memory after one that did not commit", async () => {
    const inner = memoryStore();
    let depth = 0;
    let failNextCommit = false;
    // A transaction whose work all ran and which then does not commit (as on a full disk).
    const store = {
      ...inner,
      transaction<T>(fn: () => T): T {
        depth++;
        try {
          return inner.transaction(() => {
            const result = fn();
            if (depth === 1 && failNextCommit) {
              failNextCommit = false;
              throw new Error("database or disk is full");
            }
            return result;
          });
        } finally {
          depth--;
        }
      },
    };
    const { service } = await testService(config, { store });
    await service.push("native", push(1), { userID: "u" });
    const pull = (cookie: number | null) =>
      JSON.parse(
        service.pull("native", { clientGroupID: "g", clientID: "c", cookie }, { userID: "u" }).response.body!,
      ) as { cookie: number };
    const { cookie } = pull(null);
    pull(cookie);
    expect(
      service.caughtUp.answer("native", "g", "u", cookie, pullVisibilityIdentity(undefined)),
    ).toBeDefined();
    // Two pushes in one transaction, which fails to commit: neither is kept.
    failNextCommit = true;
    expect(() =>
      service.transaction(() => {
        service.push("native", push(2), { userID: "u" });
        service.push("native", push(3), { userID: "u" });
        pull(cookie);
      }),
    ).toThrow(/disk is full/);
    expect(service.store.db.query("SELECT id FROM note ORDER BY id", [])).toEqual([["n1"]]);
    expect(
      service.caughtUp.answer("native", "g", "u", cookie, pullVisibilityIdentity(undefined)),
    ).toBeUndefined();
    pull(cookie);
    expect(
      service.caughtUp.answer("native", "g", "u", cookie, pullVisibilityIdentity(undefined)),
    ).toBeUndefined();
  });

  it("commits what `write` wrote as one version, and wakes every client", async () => {
    const { service, woken, scheduler } = await testService(config);
    const before = service.engine.state(service.store.db).watermark;
    expect(service.write((db) => db.exec("INSERT INTO note (id) VALUES ('a'), ('b')", []))).toBe(2);
    expect(service.engine.state(service.store.db).watermark).toBe(before + 1);
    // Writing nothing makes no version and wakes nobody.
    service.write(() => 0);
    expect(service.engine.state(service.store.db).watermark).toBe(before + 1);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(woken).toHaveLength(1);
    scheduler.close();
  });

  it("prunes the change log as pushes go by", async () => {
    const { service } = await testService(config);
    for (let id = 1; id <= 6; id++) await service.push("native", push(id), { userID: "u" });
    const state = service.engine.state(service.store.db);
    expect(state.floor).toBeGreaterThanOrEqual(state.watermark - 3);
    expect(state.changes).toBeLessThanOrEqual(4);
  });

  it("stores counters with each write request when the policy says so, and on close", async () => {
    const store = memoryStore();
    const stored = () => {
      // A namespace only pulled from has no table yet (nothing is installed before a write).
      const table = store.db.query("SELECT 1 FROM sqlite_master WHERE name = '_weir_host_control'", []);
      if (table.length === 0) return null;
      const row = store.db.query("SELECT value FROM _weir_host_control WHERE key = 'counters'", [])[0];
      return row ? JSON.parse(String(row[0])) : null;
    };
    const { service } = await testService(config, {
      store,
      counterFlush: { afterWrites: true, intervalMs: 60_000 },
    });
    service.pull("native", { clientGroupID: "g", clientID: "c", cookie: null }, { userID: "u" });
    expect(stored()).toBeNull();
    await service.push("native", push(1), { userID: "u" });
    expect(stored()).toMatchObject({ pulls: 1, pushes: 1 });
    service.pull("native", { clientGroupID: "g", clientID: "c", cookie: null }, { userID: "u" });
    expect(stored()).toMatchObject({ pulls: 1 });
    service.close();
  });
});
