import { describe, expect, it } from "vitest";
import { DATABASES, testEngine } from "../test/databases.js";
import type { Schema } from "./types.js";

const schema = {
  tables: {
    channel: { columns: { id: "string", secret: "boolean" }, primaryKey: ["id"] },
    message: {
      columns: {
        id: "string",
        channelId: "string",
        authorId: "string",
        at: { type: "integer", nullable: true },
        text: "string",
        pinned: "boolean",
      },
      primaryKey: ["id"],
    },
    user: { columns: { id: "string", name: "string" }, primaryKey: ["id"] },
  },
} satisfies Schema;

const col = (name: string) => ({ type: "column", name });
const lit = (value: unknown) => ({ type: "literal", value });
const cmp = (name: string, op: string, value: unknown) => ({
  type: "simple",
  op,
  left: col(name),
  right: lit(value),
});

describe.each(DATABASES)("queryRows on $kind", ({ open }) => {
  async function seeded() {
    const engine = await testEngine();
    const db = open();
    db.transaction(() => {
      engine.install(db.adapter, schema);
      const run = (sql: string) => db.adapter.exec(sql, []);
      run("INSERT INTO channel VALUES ('c1', 0), ('c2', 0), ('c3', 1)");
      run("INSERT INTO user VALUES ('u1', 'Ann'), ('u2', 'Bo'), ('u3', 'Cy')");
      run(
        "INSERT INTO message VALUES ('m1', 'c1', 'u1', 1, 'Hello', 0), ('m2', 'c1', 'u2', 2, 'hello', 1), " +
          "('m3', 'c1', 'u1', NULL, 'a*b', 0), ('m4', 'c2', 'u3', 4, '50%', 0), ('m5', 'c3', 'u2', 5, 'x', 0)",
      );
      engine.commit(db.adapter);
    });
    const ids = (ast: unknown, node = 0, visibility?: Parameters<typeof engine.queryRows>[2]) =>
      engine
        .queryRows(db.adapter, ast, visibility)
        .filter((row) => row.node === node)
        .map((row) => row.key.join("/"));
    return { engine, db, ids };
  }

  it("orders, limits and starts after a row as Zero does (NULL first, the key breaking ties)", async () => {
    const { ids } = await seeded();
    const orderBy = [["at", "asc"]];
    expect(ids({ table: "message", orderBy })).toEqual(["m3", "m1", "m2", "m4", "m5"]);
    expect(ids({ table: "message", orderBy: [["at", "desc"]], limit: 2 })).toEqual(["m5", "m4"]);
    const start = (row: unknown, exclusive: boolean) => ({
      table: "message",
      orderBy,
      start: { row, exclusive },
    });
    expect(ids(start({ at: null, id: "m3" }, true))).toEqual(["m1", "m2", "m4", "m5"]);
    expect(ids(start({ at: 2, id: "m2" }, false))).toEqual(["m2", "m4", "m5"]);
    const desc = {
      table: "message",
      orderBy: [["at", "desc"]],
      start: { row: { at: 2, id: "m2" }, exclusive: true },
    };
    expect(ids(desc)).toEqual(["m1", "m3"]);
  });

  it("compares as Zero: LIKE is case-sensitive, ILIKE is not, NOT IN never holds for NULL", async () => {
    const { ids } = await seeded();
    expect(ids({ table: "message", where: cmp("text", "LIKE", "h%") })).toEqual(["m2"]);
    expect(ids({ table: "message", where: cmp("text", "ILIKE", "h%") })).toEqual(["m1", "m2"]);
    expect(ids({ table: "message", where: cmp("text", "LIKE", "a*%") })).toEqual(["m3"]);
    expect(ids({ table: "message", where: cmp("text", "LIKE", "50\\%") })).toEqual(["m4"]);
    expect(ids({ table: "message", where: cmp("at", "NOT IN", [1, 2]) })).toEqual(["m4", "m5"]);
    expect(ids({ table: "message", where: cmp("at", "IS", null) })).toEqual(["m3"]);
    expect(ids({ table: "message", where: cmp("at", "=", null) })).toEqual([]);
    expect(ids({ table: "message", where: cmp("pinned", "IN", [true]) })).toEqual(["m2"]);
    expect(ids({ table: "message", where: { type: "or", conditions: [] } })).toEqual([]);
  });

  it("holds related rows per parent, each parent's limit apart, and tests EXISTS through visibility", async () => {
    const { ids } = await seeded();
    const ast = {
      table: "channel",
      related: [
        {
          correlation: { parentField: ["id"], childField: ["channelId"] },
          subquery: {
            table: "message",
            orderBy: [["at", "desc"]],
            limit: 1,
            related: [
              { correlation: { parentField: ["authorId"], childField: ["id"] }, subquery: { table: "user" } },
            ],
          },
        },
      ],
    };
    expect(ids(ast, 1)).toEqual(expect.arrayContaining(["m2", "m4", "m5"]));
    expect(ids(ast, 1)).toHaveLength(3);
    expect(ids(ast, 2).sort()).toEqual(["u2", "u3"]);
    const hidden = { visibility: { channel: { sql: "secret = 0" } } };
    expect(ids(ast, 1, hidden).sort()).toEqual(["m2", "m4"]);
    const exists = {
      table: "message",
      where: {
        type: "correlatedSubquery",
        op: "EXISTS",
        related: {
          correlation: { parentField: ["channelId"], childField: ["id"] },
          subquery: { table: "channel" },
        },
      },
    };
    expect(ids(exists, 0, hidden)).toEqual(["m1", "m2", "m3", "m4"]);
  });

  it("refuses what the schema cannot answer, naming the part", async () => {
    const { engine, db } = await seeded();
    expect(() => engine.queryRows(db.adapter, { table: "nope" })).toThrow(/table: the table "nope"/);
    expect(() => engine.queryRows(db.adapter, { table: "message", where: cmp("x", "=", 1) })).toThrow(
      /where\.left\.name: message has no column "x"/,
    );
    expect(() => engine.queryRows(db.adapter, { table: "message", where: cmp("at", "IN", 1) })).toThrow(
      /IN takes a list/,
    );
    expect(() =>
      engine.queryRows(db.adapter, {
        table: "message",
        orderBy: [["at", "asc"]],
        start: { row: { at: 1 }, exclusive: true },
      }),
    ).toThrow(/start\.row: the start row needs a value for id/);
    expect(() =>
      engine.queryRows(db.adapter, { table: "message", where: { type: "scalarSubquery" } }),
    ).toThrow(/where\.type: .*"scalarSubquery" conditions are not supported/);
  });
});
