import { betterSqliteAdapter } from "@weir/engine-wasm/better-sqlite3";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { tableInfos } from "./column-codec.js";
import { MutatorError } from "./mutator-error.js";
import { createMutatorTx } from "./mutator-tx.js";

function setup() {
  const raw = new Database(":memory:");
  raw.exec(`CREATE TABLE t (id TEXT PRIMARY KEY, n INTEGER NOT NULL, f REAL NOT NULL, ok INTEGER NOT NULL,
            j TEXT, b BLOB, s TEXT)`);
  raw.exec(`CREATE TABLE pair (a TEXT NOT NULL, b INTEGER NOT NULL, v TEXT, PRIMARY KEY (a, b))`);
  const tables = tableInfos({
    tables: {
      t: {
        columns: {
          id: "string",
          n: "integer",
          f: "number",
          ok: "boolean",
          j: { type: "json", nullable: true },
          b: { type: "bytes", nullable: true },
          s: { type: "string", nullable: true },
        },
        primaryKey: ["id"],
      },
      pair: {
        columns: { a: "string", b: "integer", v: { type: "string", nullable: true } },
        primaryKey: ["a", "b"],
      },
    },
  });
  const deferred: Array<() => void> = [];
  const tx = createMutatorTx({
    db: betterSqliteAdapter(raw),
    tables,
    claims: { userID: "u" },
    clientID: "c",
    deferred,
  });
  return { raw, tx, deferred };
}

describe("createMutatorTx", () => {
  it("writes and reads every column type in its wire form", () => {
    const { tx, raw } = setup();
    const row = { id: "r1", n: 7, f: 0.1, ok: true, j: { a: [1, "x"] }, b: "00ff", s: null };
    tx.api.insert("t", row);
    expect(tx.api.get("t", "r1")).toEqual(row);
    expect(raw.prepare("SELECT ok, j, hex(b) AS b FROM t").get()).toEqual({
      ok: 1,
      j: '{"a":[1,"x"]}',
      b: "00FF",
    });
    expect(tx.api.update("t", { id: "r1", ok: false, s: "set" })).toBe(true);
    expect(tx.api.get("t", { id: "r1" })).toMatchObject({ ok: false, s: "set", n: 7 });
    expect(tx.api.update("t", { id: "missing", n: 1 })).toBe(false);
    tx.api.upsert("t", { id: "r2", n: 1, f: 1, ok: false });
    tx.api.upsert("t", { id: "r2", n: 2 });
    expect(tx.api.get("t", "r2")).toMatchObject({ n: 2, f: 1 });
    expect(tx.api.delete("t", "r2")).toBe(true);
    expect(tx.api.delete("t", "r2")).toBe(false);
    expect(tx.api.get("t", "r2")).toBeUndefined();
  });

  it("reads integers beyond 2^53 exactly, as bigints, and writes them back", () => {
    const { tx, raw } = setup();
    const big = 2n ** 53n + 1n;
    tx.api.insert("t", { id: "big", n: big, f: 1, ok: true });
    tx.api.insert("t", { id: "small", n: -(2 ** 53) + 1, f: 1, ok: true });
    const row = tx.api.get("t", "big")!;
    expect(row.n).toBe(big);
    expect(tx.api.get("t", "small")!.n).toBe(-(2 ** 53) + 1);
    tx.api.insert("t", { ...row, id: "copy" });
    expect(raw.prepare("SELECT CAST(n AS TEXT) FROM t WHERE id = 'copy'").pluck().get()).toBe(String(big));
    tx.api.insert("pair", { a: "x", b: -big });
    expect(tx.api.get("pair", { a: "x", b: -big })).toEqual({ a: "x", b: -big, v: null });
  });

  it("takes an integer's decimal text (its wire form beyond 2^53) and writes it exactly", () => {
    const { tx, raw } = setup();
    tx.api.insert("pair", { a: "s", b: "9007199254740993" });
    tx.api.insert("pair", { a: "s", b: "9007199254740994" });
    expect(tx.api.get("pair", { a: "s", b: "9007199254740993" })).toEqual({
      a: "s",
      b: 2n ** 53n + 1n,
      v: null,
    });
    expect(raw.prepare("SELECT CAST(b AS TEXT) FROM pair WHERE a = 's' ORDER BY b").pluck().all()).toEqual([
      "9007199254740993",
      "9007199254740994",
    ]);
    for (const b of ["12.5", "1e3", "9223372036854775808", "x", " 1"]) {
      expect(() => tx.api.insert("pair", { a: "bad", b })).toThrow(MutatorError);
    }
  });

  it("upserts a complete row over an existing one, and a key-only row changes nothing", () => {
    const { tx } = setup();
    tx.api.upsert("t", { id: "r", n: 1, f: 1.5, ok: true, s: "first" });
    tx.api.upsert("t", { id: "r", n: 2, f: 2.5, ok: false });
    expect(tx.api.get("t", "r")).toEqual({ id: "r", n: 2, f: 2.5, ok: false, j: null, b: null, s: "first" });
    tx.api.upsert("pair", { a: "x", b: 1, v: "kept" });
    tx.api.upsert("pair", { a: "x", b: 1 });
    expect(tx.api.get("pair", { a: "x", b: 1 })).toEqual({ a: "x", b: 1, v: "kept" });
    expect(() => tx.api.upsert("t", { id: "r", n: "two", f: 1, ok: true })).toThrow(MutatorError);
  });

  it("writes each shape of row with its own columns, in any order of shapes and column orders", () => {
    const { tx } = setup();
    const shapes = [
      { n: 1, f: 1, ok: true },
      { f: 2, n: 2, ok: false, s: "two" },
      { ok: true, n: 3, f: 3, j: [3] },
    ];
    for (let round = 0; round < 2; round++) {
      shapes.forEach((shape, i) => {
        tx.api.upsert("t", { id: `u${i}`, ...shape });
        tx.api.insert("t", { id: `i${round}-${i}`, ...shape });
        tx.api.update("t", { id: `u${i}`, ...shape, n: shape.n * 10 });
      });
    }
    shapes.forEach((shape, i) => {
      expect(tx.api.get("t", `u${i}`)).toMatchObject({ ...shape, n: shape.n * 10 });
      expect(tx.api.get("t", `i1-${i}`)).toMatchObject(shape);
    });
    expect(tx.api.get("t", "u0")).toMatchObject({ s: null, j: null });
  });

  it("takes composite keys as objects", () => {
    const { tx } = setup();
    tx.api.insert("pair", { a: "x", b: 1, v: "one" });
    expect(tx.api.get("pair", { a: "x", b: 1 })).toEqual({ a: "x", b: 1, v: "one" });
    expect(() => tx.api.get("pair", "x")).toThrow(/composite key/);
    expect(tx.api.delete("pair", { a: "x", b: 1 })).toBe(true);
  });

  it("runs SQL with bound parameters", () => {
    const { tx } = setup();
    expect(
      tx.api.exec("INSERT INTO t (id, n, f, ok) VALUES (?, ?, ?, ?)", ["q'); DROP TABLE t; --", 1, 2, 0]),
    ).toBe(1);
    expect(tx.api.query("SELECT id FROM t WHERE n = ?", [1])).toEqual([["q'); DROP TABLE t; --"]]);
  });

  it("turns wrong values, unknown names and constraint violations into application errors", () => {
    const { tx } = setup();
    const refusals = [
      () => tx.api.insert("nope", { id: "x" }),
      () => tx.api.insert("t", { id: "x", n: 1.5, f: 1, ok: true }),
      () => tx.api.insert("t", { id: "x", n: 1, f: 1, ok: "true" }),
      () => tx.api.insert("t", { id: "x", n: 1, f: Number.NaN, ok: true }),
      () => tx.api.insert("t", { id: "x", n: 1, f: 1, ok: true, b: "ABC" }),
      () => tx.api.insert("t", { id: "x", n: 1, f: 1, ok: true, unknown: 1 }),
      () => tx.api.insert("t", { id: "x", n: null, f: 1, ok: true }),
      () => tx.api.insert("t", { id: "x", f: 1, ok: true }),
    ];
    for (const refusal of refusals) expect(refusal).toThrow(MutatorError);
    tx.api.insert("t", { id: "dup", n: 1, f: 1, ok: true });
    expect(() => tx.api.insert("t", { id: "dup", n: 1, f: 1, ok: true })).toThrow(MutatorError);
  });

  it("queues deferred effects and refuses use after the mutation ended", () => {
    const { tx, deferred } = setup();
    tx.api.defer(() => {});
    expect(deferred).toHaveLength(1);
    tx.close();
    expect(() => tx.api.get("t", "x")).toThrow(/after its mutation ended/);
    expect(() => tx.api.exec("DELETE FROM t", [])).toThrow(/after its mutation ended/);
  });
});
