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
  wakeWindowMs: 0,
};

const push = (group: string, id: number) => ({
  clientGroupID: group,
  pushVersion: 1,
  mutations: [{ type: "custom", id, clientID: "c", name: "put", args: [{ id: `n${id}` }] }],
});
const pull = (group: string, cookie: number | null) => ({ clientGroupID: group, clientID: "c", cookie });
const tables = (store: ReturnType<typeof memoryStore>) =>
  store.db.query("SELECT name FROM sqlite_master WHERE type = 'table'", []).map((row) => row[0]);
const json = (result: { response: { body: string | null } }) => JSON.parse(result.response.body ?? "null");

describe("a namespace nothing was written to", () => {
  it("answers a plain pull without installing anything, and installs with the first write", async () => {
    const store = memoryStore();
    const { service } = await testService(config, { store });
    expect(json(service.pull("native", pull("g", null), { userID: "u" }))).toEqual({
      cookie: 0,
      lastMutationIDChanges: {},
      rowsPatch: [{ op: "clear" }],
    });
    expect(
      json(
        service.pull(
          "replicache",
          { ...pull("g", 0), pullVersion: 1, schemaVersion: "", profileID: "p" },
          { userID: "u" },
        ),
      ),
    ).toEqual({
      cookie: 0,
      lastMutationIDChanges: {},
      patch: [],
    });
    expect(tables(store)).toEqual([]);
    expect(service.pristine).toBe(true);
    // The group is still the first puller's: another user's pull is refused.
    expect(() => service.pull("native", pull("g", 0), { userID: "mallory" })).toThrow(
      expect.objectContaining({ code: "forbidden" }),
    );
    await service.push("native", push("other", 1), { userID: "v" });
    expect(service.pristine).toBe(false);
    expect(tables(store)).toContain("_weir_state");
    // Registered with the install: still refused, and its owner goes on from its cookie.
    expect(() => service.pull("native", pull("g", 0), { userID: "mallory" })).toThrow(
      expect.objectContaining({ code: "forbidden" }),
    );
    const next = json(service.pull("native", pull("g", 0), { userID: "u" }));
    expect(next.rowsPatch).toEqual([{ op: "put", tableName: "note", value: { id: "n1" } }]);
    service.close();
  });

  it("installs before an admin request reads it", async () => {
    const store = memoryStore();
    const { service } = await testService(config, { store });
    expect(service.admin("status", "GET", undefined).response.status).toBe(200);
    expect(tables(store)).toContain("_weir_state");
    service.close();
  });
});
