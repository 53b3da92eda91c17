import { describe, expect, it } from "vitest";
import { DATABASES, testEngine } from "../test/databases.js";
import { Namespace, ownerFilter, todoSchema } from "../test/fixtures.js";
import type { Visibility } from "./types.js";

const insert = "INSERT INTO todo (id, owner, text, done, sort) VALUES (?, ?, 'x', 0, 0)";

describe.each(DATABASES)("visibility on $kind", ({ open }) => {
  async function namespace() {
    return new Namespace(await testEngine(), open(), todoSchema);
  }
  const ids = (patch: { value?: Record<string, unknown> }[] | undefined) => patch?.map((op) => op.value?.id);

  it("returns only the rows the claims may see", async () => {
    const ns = await namespace();
    ns.sql(insert, ["a1", "alice"]);
    ns.sql(insert, ["b1", "bob"]);
    const alice = ns.pull({
      cookie: null,
      userID: "alice",
      clientGroupID: "ga",
      visibility: ownerFilter("alice"),
    });
    expect(ids(alice.json.rowsPatch?.slice(1))).toEqual(["a1"]);
    expect(alice.body).not.toContain("b1");
  });

  it("deletes a row that leaves the filter and puts one that enters it", async () => {
    const ns = await namespace();
    ns.sql(insert, ["a1", "alice"]);
    ns.sql(insert, ["b1", "bob"]);
    const visibility = ownerFilter("alice");
    const { cookie } = ns.pull({ cookie: null, userID: "alice", visibility });
    ns.sql("UPDATE todo SET owner = 'bob' WHERE id = 'a1'");
    ns.sql("UPDATE todo SET owner = 'alice' WHERE id = 'b1'");
    const result = ns.pull({ cookie, userID: "alice", visibility });
    expect(result.json.rowsPatch).toEqual([
      { op: "del", tableName: "todo", id: { id: "a1" } },
      { op: "put", tableName: "todo", value: { id: "b1", owner: "alice", text: "x", done: false, sort: 0 } },
    ]);
  });

  it("recomputes a group's rows under claims that filter otherwise, caught up or behind", async () => {
    const ns = await namespace();
    ns.sql(insert, ["a1", "alice"]);
    ns.sql(insert, ["b1", "bob"]);
    const both: Visibility = { todo: { sql: "owner IN (?, ?)", params: ["alice", "bob"] } };
    const first = ns.pull({ cookie: null, userID: "alice", visibility: both });
    expect(ids(first.json.rowsPatch?.slice(1))).toEqual(["a1", "b1"]);
    // Caught up, under narrower claims: not unchanged, neither from the caught-up check.
    expect(
      ns.engine.pullIfCaughtUp(ns.db.adapter, {
        clientGroupID: "g",
        userID: "alice",
        cookie: first.cookie,
        visibility: ownerFilter("alice"),
      }),
    ).toBeNull();
    const narrowed = ns.pull({ cookie: first.cookie, userID: "alice", visibility: ownerFilter("alice") });
    expect(narrowed.reset).toBe(true);
    expect(narrowed.json.rowsPatch).toEqual([
      { op: "clear" },
      expect.objectContaining({ value: expect.objectContaining({ id: "a1" }) }),
    ]);
    expect(
      ns.pull({ cookie: narrowed.cookie, userID: "alice", visibility: ownerFilter("alice") }).unchanged,
    ).toBe(true);
    // Behind, under wider claims again.
    ns.sql(insert, ["a2", "alice"]);
    const widened = ns.pull({ cookie: narrowed.cookie, userID: "alice", visibility: both });
    expect(widened.reset).toBe(true);
    expect(ids(widened.json.rowsPatch?.slice(1))).toEqual(["a1", "a2", "b1"]);
  });

  it("recomputes once a group an engine before kept no visibility for", async () => {
    const ns = await namespace();
    ns.sql(insert, ["a1", "alice"]);
    const visibility = ownerFilter("alice");
    const { cookie } = ns.pull({ cookie: null, userID: "alice", visibility });
    ns.db.adapter.exec("ALTER TABLE _weir_client_groups DROP COLUMN visibility", []);
    ns.db.transaction(() => ns.engine.install(ns.db.adapter, todoSchema));
    expect(ns.pull({ cookie, userID: "alice", visibility }).reset).toBe(true);
    const again = ns.pull({ cookie, userID: "alice", visibility });
    expect(again.unchanged).toBe(true);
  });

  it("never sends even the key of a row the client could not see", async () => {
    const ns = await namespace();
    const visibility = ownerFilter("alice");
    const { cookie } = ns.pull({ cookie: null, userID: "alice", visibility });
    ns.sql(insert, ["secret", "bob"]);
    ns.sql("UPDATE todo SET text = 'changed' WHERE id = 'secret'");
    ns.sql("DELETE FROM todo WHERE id = 'secret'");
    const result = ns.pull({ cookie, userID: "alice", visibility });
    expect(result.json.rowsPatch).toEqual([]);
    expect(result.body).not.toContain("secret");
  });

  it("binds claim values, so a hostile claim cannot widen the filter", async () => {
    const ns = await namespace();
    ns.sql(insert, ["a1", "alice"]);
    ns.sql(insert, ["x1", "' OR 1=1 --"]);
    const hostile = "' OR 1=1 --";
    const result = ns.pull({ cookie: null, userID: hostile, visibility: ownerFilter(hostile) });
    expect(ids(result.json.rowsPatch?.slice(1))).toEqual(["x1"]);
    const none = ns.pull({
      cookie: null,
      userID: "x",
      clientGroupID: "g2",
      visibility: ownerFilter("nobody') OR ('1'='1"),
    });
    expect(none.json.rowsPatch).toEqual([{ op: "clear" }]);
  });

  it("accepts filters with several parameters, including bigint values", async () => {
    const ns = await namespace();
    ns.sql(insert, ["a1", "alice"]);
    ns.sql(insert, ["a2", "alice"]);
    ns.sql("UPDATE todo SET sort = 5 WHERE id = 'a2'");
    const visibility = { todo: { sql: "owner = ? AND sort < ?", params: ["alice", 3n] } };
    const result = ns.pull({ cookie: null, userID: "alice", visibility });
    expect(ids(result.json.rowsPatch?.slice(1))).toEqual(["a1"]);
    // At cookie 2 the client held a2 (sort 0); its update to sort 5 takes it out of view.
    const incremental = ns.pull({ cookie: 2, userID: "alice", visibility });
    expect(incremental.json.rowsPatch).toEqual([{ op: "del", tableName: "todo", id: { id: "a2" } }]);
  });

  it("refuses a filter on a table that is not in the schema", async () => {
    const ns = await namespace();
    expect(() => ns.pull({ cookie: null, visibility: { nope: { sql: "1" } } })).toThrow(/not in the schema/);
  });
});
