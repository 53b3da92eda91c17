import { describe, expect, it } from "vitest";
import { channelMessages, chatSchema, groupClients } from "../test/chat.js";
import { DATABASES, testEngine } from "../test/databases.js";
import { Namespace } from "../test/fixtures.js";
import type { QueryPatchOp } from "./types.js";

// A group's membership rows are keyed by a small integer standing for its id (_weir_group_keys).
// An earlier engine keyed them by the id itself: installing rekeys them as they stand, and every
// group pulls on from its cookie, without a reset.
const query = channelMessages("c1", 2);
const put = { op: "put", hash: "h", name: "channel", args: ["c1"], ast: query } satisfies QueryPatchOp;

/** Turns the rows tables back into the layout keyed by group id, as an earlier engine left them. */
function keyByGroupID(ns: Namespace) {
  const tables: Array<[string, string, string]> = [
    ["_weir_query_rows", "hash TEXT NOT NULL, tbl TEXT NOT NULL, pk TEXT NOT NULL", "hash, tbl, pk"],
    ["_weir_group_rows", "tbl TEXT NOT NULL, pk TEXT NOT NULL, refs INTEGER NOT NULL", "tbl, pk"],
    ["_weir_query_pending", "tbl TEXT NOT NULL, pk TEXT NOT NULL, client_has INTEGER NOT NULL", "tbl, pk"],
  ];
  ns.db.transaction(() => {
    for (const [table, columns, key] of tables) {
      const names = columns.replace(/ [A-Z]+ NOT NULL/g, "");
      ns.db.adapter.exec(
        `CREATE TABLE old (group_id TEXT NOT NULL, ${columns}, PRIMARY KEY (group_id, ${key})) WITHOUT ROWID`,
        [],
      );
      ns.db.adapter.exec(
        `INSERT INTO old SELECT k.group_id, ${names} FROM ${table} JOIN _weir_group_keys AS k USING (group_key)`,
        [],
      );
      ns.db.adapter.exec(`DROP TABLE ${table}`, []);
      ns.db.adapter.exec(`ALTER TABLE old RENAME TO ${table}`, []);
    }
    ns.db.adapter.exec("DROP TABLE _weir_group_keys", []);
  });
}

const count = (ns: Namespace, sql: string) => Number(ns.db.adapter.query(sql, [])[0]?.[0]);

describe.each(DATABASES)("group keys on $kind", ({ open }) => {
  async function chat() {
    const ns = new Namespace(await testEngine(), open(), chatSchema);
    ns.sql("INSERT INTO user VALUES ('u1', 'Ann'), ('u2', 'Bo'), ('u3', 'Cy')");
    ns.sql("INSERT INTO message VALUES ('m1', 'c1', 'u1', 1, 'a'), ('m2', 'c1', 'u2', 2, 'b')");
    return { ns, ...groupClients(ns, put) };
  }

  it("gives each group a key on its first query-aware pull, the next one higher", async () => {
    const { ns, pull } = await chat();
    pull("zed");
    pull("abe");
    pull("zed");
    expect(
      ns.db.adapter.query("SELECT group_id, group_key FROM _weir_group_keys ORDER BY group_key", []),
    ).toEqual([
      ["zed", 1],
      ["abe", 2],
    ]);
    // Every membership row is held under the key, none under the id.
    expect(count(ns, "SELECT count(DISTINCT group_key) FROM _weir_group_rows")).toBe(2);
    expect(
      count(ns, "SELECT count(*) FROM pragma_table_info('_weir_group_rows') WHERE name = 'group_id'"),
    ).toBe(0);
  });

  it("rekeys the rows of an earlier layout on install; groups pull on from their cookies", async () => {
    const { ns, pull, expected, keys } = await chat();
    pull("g1");
    // g2's answer is cut: rows stay owed to it across the upgrade.
    expect(pull("g2", { maxChangeRows: 1 }).more).toBe(true);
    const held = count(ns, "SELECT count(*) FROM _weir_query_rows");
    const owed = count(ns, "SELECT count(*) FROM _weir_query_pending");
    expect(owed).toBeGreaterThan(0);
    keyByGroupID(ns);
    expect(ns.db.transaction(() => ns.engine.install(ns.db.adapter, chatSchema))).toEqual({
      outcome: "unchanged",
    });
    expect(count(ns, "SELECT count(*) FROM _weir_group_keys")).toBe(2);
    expect(count(ns, "SELECT count(*) FROM _weir_query_rows")).toBe(held);
    expect(count(ns, "SELECT count(*) FROM _weir_query_pending")).toBe(owed);
    // A new message pushes m1 (and its author) out of the two-message window: a group whose
    // rows were lost would keep them.
    ns.sql("INSERT INTO message VALUES ('m3', 'c1', 'u3', 3, 'c')");
    const g1 = pull("g1");
    expect(g1.reset).toBe(false);
    expect(g1.json.rowsPatch?.map((op) => op.op).sort()).toEqual(["del", "del", "put", "put"]);
    expect(keys("g1")).toEqual(expected());
    let answer = pull("g2", { maxChangeRows: 1 });
    expect(answer.reset).toBe(false);
    while (answer.more) answer = pull("g2", { maxChangeRows: 1 });
    expect(keys("g2")).toEqual(expected());
    // The rekeyed groups lend as before, and a new group's key follows theirs.
    expect(pull("g3").queriesCopied).toBe(1);
    expect(keys("g3")).toEqual(expected());
    expect(count(ns, "SELECT group_key FROM _weir_group_keys WHERE group_id = 'g3'")).toBe(3);
  });
});
