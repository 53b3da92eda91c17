import { describe, expect, it } from "vitest";
import { ClientRows } from "../test/chat.js";
import { DATABASES, testEngine } from "../test/databases.js";
import { Namespace } from "../test/fixtures.js";
import type { QueryPatchOp, Schema } from "./types.js";

// A reset of a group that held rows builds them under a new key; the old key's rows are deleted
// by the pulls after it, 16,384 a pull, instead of all in the reset's own step.

const schema: Schema = {
  tables: { item: { columns: { id: "string", kind: "string" }, primaryKey: ["id"] } },
};
const ITEMS = 20_000;
const A_PULL = 16_384;

const ofKind = (kind: string): QueryPatchOp => ({
  op: "put",
  hash: `kind-${kind}`,
  name: "ofKind",
  args: [kind],
  ast: {
    table: "item",
    where: {
      type: "simple",
      op: "=",
      left: { type: "column", name: "kind" },
      right: { type: "literal", value: kind },
    },
  },
});

describe.each(DATABASES)("a reset's old rows let go of over the pulls after it on $kind", ({ open }) => {
  async function namespace() {
    const ns = new Namespace(await testEngine(), open(), schema);
    ns.sql(
      "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < ?) " +
        "INSERT INTO item SELECT printf('i%05d', i), 'a' FROM n",
      [ITEMS],
    );
    const count = (sql: string) => Number(ns.db.adapter.query(sql, [])[0]![0]);
    /** Rows kept under keys no group has any longer, over the membership tables. */
    const dead = () =>
      count(
        "SELECT (SELECT count(*) FROM _weir_query_rows WHERE group_key NOT IN (SELECT group_key FROM _weir_group_keys)) + " +
          "(SELECT count(*) FROM _weir_group_rows WHERE group_key NOT IN (SELECT group_key FROM _weir_group_keys))",
      );
    const deadKeys = () => count("SELECT count(*) FROM _weir_dead_group_keys");
    /** A client of `group` pulling from nothing until unchanged, with `patch` first. */
    const hydrate = (group: string, patch: QueryPatchOp[] = []) => {
      const client = new ClientRows();
      for (let pulls = 0; pulls < 10; pulls++) {
        const result = ns.pull({
          clientGroupID: group,
          cookie: client.cookie,
          queries: { patch },
          maxChangeRows: 100_000,
        });
        if (result.json.unchanged) break;
        patch = [];
        client.apply(result.json as never, schema);
      }
      return client;
    };
    return { ns, dead, deadKeys, hydrate };
  }

  it("deletes none of them in the reset, and all of them a bounded number a pull after", async () => {
    const { dead, deadKeys, hydrate } = await namespace();
    expect(hydrate("g", [ofKind("a")]).rows.size).toBe(ITEMS);
    expect(dead()).toBe(0);
    // A second client of the group starts from nothing: the group's 20,000 query rows and
    // 20,000 group rows are left under its old key.
    expect(hydrate("g").rows.size).toBe(ITEMS);
    expect(dead()).toBe(2 * ITEMS);
    expect(deadKeys()).toBe(1);
    // Each pull that does work after it (here other groups' first pulls) deletes 16,384 of them.
    hydrate("h1", [ofKind("b")]);
    expect(dead()).toBe(2 * ITEMS - A_PULL);
    hydrate("h2", [ofKind("b")]);
    expect(dead()).toBe(2 * ITEMS - 2 * A_PULL);
    hydrate("h3", [ofKind("b")]);
    expect(dead()).toBe(0);
    expect(deadKeys()).toBe(0);
  });

  it("keeps one old key a group at most: a second reset collects the first's rows in full", async () => {
    const { dead, deadKeys, hydrate } = await namespace();
    hydrate("g", [ofKind("a")]);
    hydrate("g");
    expect(dead()).toBe(2 * ITEMS);
    const again = hydrate("g");
    expect(again.rows.size).toBe(ITEMS);
    expect(dead()).toBe(2 * ITEMS);
    expect(deadKeys()).toBe(1);
  });

  it("answers the group as before across resets, writes and other groups", async () => {
    const { ns, hydrate } = await namespace();
    const first = hydrate("g", [ofKind("a"), ofKind("b")]);
    ns.sql("UPDATE item SET kind = 'b' WHERE id < 'i00100'");
    const second = hydrate("g");
    // The first client catches up from its cookie; both end with every row of both kinds.
    for (let pulls = 0; pulls < 10; pulls++) {
      const result = ns.pull({
        clientGroupID: "g",
        cookie: first.cookie,
        queries: { patch: [] },
        maxChangeRows: 100_000,
      });
      if (result.json.unchanged) break;
      first.apply(result.json as never, schema);
    }
    expect(first.rows.size).toBe(ITEMS);
    expect(second.rows).toEqual(first.rows);
    expect(second.rows.get('item/["i00000"]')).toEqual({ id: "i00000", kind: "b" });
  });
});
