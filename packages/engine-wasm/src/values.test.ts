import { describe, expect, it } from "vitest";
import { DATABASES, testEngine } from "../test/databases.js";
import { Namespace } from "../test/fixtures.js";
import type { Schema } from "./types.js";

const schema = {
  tables: {
    item: {
      columns: {
        id: "string",
        real: { type: "number", nullable: true },
        big: { type: "integer", nullable: true },
        flag: { type: "boolean", nullable: true },
        doc: { type: "json", nullable: true },
        data: { type: "bytes", nullable: true },
        label: { type: "string", nullable: true },
      },
      primaryKey: ["id"],
    },
    pair: {
      columns: { a: "string", b: "integer", v: "string" },
      primaryKey: ["a", "b"],
    },
  },
} satisfies Schema;

const insertItem = "INSERT INTO item (id, real, big, flag, doc, data, label) VALUES (?, ?, ?, ?, ?, ?, ?)";

describe.each(DATABASES)("values on $kind", ({ open }) => {
  async function namespace() {
    return new Namespace(await testEngine(), open(), schema);
  }

  it("keeps floats that need 17 digits, and prints them shortest", async () => {
    const ns = await namespace();
    const values = [
      0.1 + 0.2,
      0.1,
      1 / 3,
      5e-324,
      1.7976931348623157e308,
      -2.5e-7,
      123456789.12345679,
      1e21,
      2 ** 53 + 2,
      0,
      12345,
      -7,
      999_999_999_999_999,
      1e15,
      2.5,
    ];
    for (const [i, value] of values.entries())
      ns.sql(insertItem, [`f${String(i).padStart(2, "0")}`, value, null, null, null, null, null]);
    const { body } = ns.pull({ cookie: null });
    expect(body).toContain('"real":0.30000000000000004');
    expect(body).toContain('"real":0.1,');
    expect(body).toMatch(/"real":12345(\.0)?,/);
    const rows = JSON.parse(body).rowsPatch.slice(1);
    expect(rows.map((op: { value: { real: number } }) => op.value.real)).toEqual(values);
  });

  it("sends integers beyond 2^53 as their decimal text, exactly, and the others as numbers", async () => {
    const ns = await namespace();
    const safe = 2 ** 53 - 1;
    const values: [string, bigint | number][] = [
      ["a", safe],
      ["b", -safe],
      ["c", 2n ** 53n],
      ["d", 2n ** 53n + 1n],
      ["e", 2n ** 53n + 2n],
      ["f", -(2n ** 53n) - 1n],
      ["g", 2n ** 63n - 1n],
      ["h", -(2n ** 63n)],
    ];
    for (const [id, big] of values) ns.sql(insertItem, [id, null, big, null, null, null, null]);
    for (const dialect of ["native", "replicache"] as const) {
      const { body } = ns.pull({ cookie: null, dialect });
      // What a client's JSON.parse reads, every value distinct and exact.
      const parsed = JSON.parse(body);
      const rows = (dialect === "native" ? parsed.rowsPatch : parsed.patch).slice(1);
      expect(rows.map((op: { value: { big: unknown } }) => op.value.big)).toEqual([
        safe,
        -safe,
        "9007199254740992",
        "9007199254740993",
        "9007199254740994",
        "-9007199254740993",
        "9223372036854775807",
        "-9223372036854775808",
      ]);
    }
  });

  it("names a deleted row's integer key beyond 2^53 exactly", async () => {
    const ns = await namespace();
    ns.sql("INSERT INTO pair (a, b, v) VALUES ('k', ?, 'one'), ('k', ?, 'two')", [
      2n ** 53n + 1n,
      2n ** 53n + 2n,
    ]);
    const { cookie } = ns.pull({ cookie: null });
    ns.sql("DELETE FROM pair WHERE b = ?", [2n ** 53n + 1n]);
    expect(ns.pull({ cookie }).json.rowsPatch).toEqual([
      { op: "del", tableName: "pair", id: { a: "k", b: "9007199254740993" } },
    ]);
    expect(ns.pull({ cookie, dialect: "replicache" }).json.patch).toEqual([
      { op: "del", key: "pair/k/9007199254740993" },
    ]);
  });

  it("returns booleans as booleans, json as values, bytes as hex, nulls as null", async () => {
    const ns = await namespace();
    ns.sql(insertItem, [
      "v",
      null,
      7,
      1,
      '{"nested":[1,"two",null]}',
      new Uint8Array([0, 1, 254, 255]),
      null,
    ]);
    ns.sql(insertItem, ["w", null, null, 0, null, null, null]);
    const rows = ns
      .pull({ cookie: null })
      .json.rowsPatch?.slice(1)
      .map((op) => op.value);
    expect(rows).toEqual([
      {
        id: "v",
        real: null,
        big: 7,
        flag: true,
        doc: { nested: [1, "two", null] },
        data: "0001feff",
        label: null,
      },
      { id: "w", real: null, big: null, flag: false, doc: null, data: null, label: null },
    ]);
  });

  it("keeps unicode text and control characters unchanged", async () => {
    const ns = await namespace();
    const text = "emoji 🧪, CJK 同期, RTL שלום, NUL-free controls \t\n\r\u0001, quotes \"' and \\";
    ns.sql(insertItem, ["u", null, null, null, null, null, text]);
    const op = ns.pull({ cookie: null }).json.rowsPatch?.[1];
    expect(op?.value?.label).toBe(text);
  });

  it("renders every put as compact JSON, in both dialects", async () => {
    const ns = await namespace();
    const text = "quotes \"' and \\, slash / and tilde ~, 同期 🧪, controls \t\u0001";
    ns.sql(insertItem, [text, null, 7, 1, '{"a":[1,"x"]}', null, text]);
    ns.sql("INSERT INTO pair (a, b, v) VALUES (?, 2, ?)", [text, text]);
    for (const dialect of ["native", "replicache"] as const) {
      const { body } = ns.pull({ cookie: null, dialect });
      // Values that JSON.stringify writes as SQLite does (text, integers, booleans, objects):
      // the body is then exactly its own canonical form.
      expect(body).toBe(JSON.stringify(JSON.parse(body)));
    }
    const replicache = ns.pull({ cookie: null, dialect: "replicache" }).json.patch;
    expect(replicache).toContainEqual({
      op: "put",
      key: `pair/${text.replaceAll("~", "~0").replaceAll("/", "~1")}/2`,
      value: { a: text, b: 2, v: text },
    });
    const native = ns.pull({ cookie: null }).json.rowsPatch;
    expect(native).toContainEqual({
      op: "put",
      tableName: "item",
      value: { id: text, real: null, big: 7, flag: true, doc: { a: [1, "x"] }, data: null, label: text },
    });
  });

  it("refuses values of the wrong type (the tables are STRICT)", async () => {
    const ns = await namespace();
    expect(() => ns.sql(insertItem, ["x", null, null, 2, null, null, null])).toThrow(/CHECK constraint/);
    expect(() => ns.sql(insertItem, ["y", null, null, null, "{not json", null, null])).toThrow(
      /CHECK constraint/,
    );
    expect(() => ns.sql(insertItem, ["z", "text", null, null, null, null, null])).toThrow(
      /cannot store TEXT/,
    );
    expect(ns.pull({ cookie: null }).json.rowsPatch).toEqual([{ op: "clear" }]);
  });

  it("handles composite and text keys, and a primary-key update", async () => {
    const ns = await namespace();
    ns.sql("INSERT INTO pair (a, b, v) VALUES ('x/y', 1, 'one'), ('x/y', 2, 'two')");
    const { cookie } = ns.pull({ cookie: null });
    ns.sql("UPDATE pair SET b = 3 WHERE a = 'x/y' AND b = 1");
    const native = ns.pull({ cookie });
    expect(native.json.rowsPatch).toEqual([
      { op: "del", tableName: "pair", id: { a: "x/y", b: 1 } },
      { op: "put", tableName: "pair", value: { a: "x/y", b: 3, v: "one" } },
    ]);
    const replicache = ns.pull({ cookie, dialect: "replicache" });
    expect(replicache.json.patch).toEqual([
      { op: "del", key: "pair/x~1y/1" },
      { op: "put", key: "pair/x~1y/3", value: { a: "x/y", b: 3, v: "one" } },
    ]);
  });
});
