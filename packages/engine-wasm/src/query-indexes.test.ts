import { describe, expect, it } from "vitest";
import { DATABASES, testEngine } from "../test/databases.js";
import { Namespace } from "../test/fixtures.js";
import { tableIndexes } from "./table-indexes.js";
import type { Schema } from "./types.js";

const schema: Schema = {
  tables: {
    item: { columns: { id: "string", rank: "integer" }, primaryKey: ["id"] },
    tag: { columns: { id: "string", itemId: "string", label: "string" }, primaryKey: ["id"] },
  },
};

/** The reported query: four items by id with a tag of this label. */
const tagged = (label: string) => ({
  table: "item",
  orderBy: [["id", "asc"]],
  limit: 4,
  where: {
    type: "correlatedSubquery",
    op: "EXISTS",
    related: {
      correlation: { parentField: ["id"], childField: ["itemId"] },
      subquery: {
        table: "tag",
        where: {
          type: "simple",
          op: "=",
          left: { type: "column", name: "label" },
          right: { type: "literal", value: label },
        },
      },
    },
  },
});
const topRanked = { table: "item", orderBy: [["rank", "desc"]], limit: 10 };

describe.each(DATABASES)("indexes of the named queries at install on $kind", ({ open }) => {
  it("creates each query's indexes before any is put, naming the query that asked", async () => {
    const engine = await testEngine();
    const db = open();
    const installed = db.transaction(() =>
      engine.install(db.adapter, schema, {
        queries: [
          { name: "tagged", ast: tagged("x") },
          { name: "top */ ranked", ast: topRanked },
          { name: "again", ast: tagged("y") },
          { name: "broken", ast: { table: "nothing" } },
        ],
      }),
    );
    expect(installed).toEqual({
      outcome: "created",
      unindexed: [{ name: "broken", message: expect.stringContaining('"nothing" is not in the schema') }],
    });
    expect(tableIndexes(db.adapter)).toEqual([
      {
        name: "_weir_qx:item(rank-)",
        table: "item",
        columns: '"rank" DESC',
        derived: true,
        query: "top */ ranked",
      },
      {
        name: "_weir_qx:tag(itemId,label)",
        table: "tag",
        columns: '"itemId", "label"',
        derived: true,
        query: "tagged",
      },
    ]);
    // The next open installs the same again: nothing new.
    db.transaction(() =>
      engine.install(db.adapter, schema, { queries: [{ name: "tagged", ast: tagged("x") }] }),
    );
    expect(tableIndexes(db.adapter)).toHaveLength(2);
    db.close();
  });

  it("leaves out an index the app declared that serves; a put makes one and names its query", async () => {
    const engine = await testEngine();
    const ns = new Namespace(engine, open(), schema);
    ns.db.adapter.exec("CREATE INDEX tag_item ON tag (itemId, label, id)", []);
    ns.db.transaction(() =>
      engine.install(ns.db.adapter, schema, {
        queries: [
          { name: "tagged", ast: tagged("x") },
          { name: "top", ast: topRanked },
        ],
      }),
    );
    expect(tableIndexes(ns.db.adapter).map((index) => [index.name, index.query])).toEqual([
      ["_weir_qx:item(rank-)", "top"],
      ["tag_item", null],
    ]);
    // Without it, a put makes it, and names its query.
    ns.db.adapter.exec("DROP INDEX tag_item", []);
    ns.pull({
      cookie: null,
      queries: { patch: [{ op: "put", hash: "q", name: "tagged", args: ["z"], ast: tagged("z") }] },
    });
    expect(tableIndexes(ns.db.adapter).map((index) => [index.name, index.query])).toEqual([
      ["_weir_qx:item(rank-)", "top"],
      ["_weir_qx:tag(itemId,label)", "tagged"],
    ]);
    ns.db.close();
  });
});
