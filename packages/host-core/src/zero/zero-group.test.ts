import { describe, expect, it } from "vitest";
import { ZeroGroup } from "./zero-group.js";

const hashOf = (op: { op: string; hash?: string }) => op.hash;

const put = (hash: string, name = "q", args: unknown[] = [{ n: 1 }]) => ({
  op: "put" as const,
  hash,
  name,
  args,
});

describe("ZeroGroup", () => {
  it("keeps a query active while any client of the group wants it", () => {
    const group = new ZeroGroup("g", "u");
    group.desire("c1", [put("h")]);
    group.desire("c2", [put("h")]);
    expect(group.takeEnginePatch()).toEqual([{ op: "put", hash: "h", name: "q", args: { n: 1 } }]);
    group.desire("c1", [{ op: "del", hash: "h" }]);
    expect(group.takeEnginePatch()).toEqual([]);
    group.desire("c2", [{ op: "clear" }]);
    expect(group.takeEnginePatch()).toEqual([{ op: "del", hash: "h" }]);
  });

  it("cancels a pending put with its del and a pending del with its put, in a patch of many", () => {
    const group = new ZeroGroup("g", "u");
    const hashes = Array.from({ length: 2_000 }, (_, i) => `h${i}`);
    group.desire(
      "c1",
      hashes.map((hash) => put(hash)),
    );
    // Half the puts are let go of again before any pull: they never reach the engine.
    group.desire(
      "c1",
      hashes.filter((_, i) => i % 2 === 1).map((hash) => ({ op: "del" as const, hash })),
    );
    const first = group.takeEnginePatch(600);
    expect(first.map((op) => op.op === "put" && op.hash)).toEqual(
      hashes.filter((_, i) => i % 2 === 0).slice(0, 600),
    );
    // Of those the engine took, a del goes to it; of those still pending, the put is dropped.
    group.desire("c1", [
      { op: "del", hash: "h0" },
      { op: "del", hash: "h1998" },
    ]);
    // A del pending is cancelled by the put that follows it: the engine keeps the query.
    group.desire("c1", [put("h0")]);
    const rest = group.takeEnginePatch();
    expect(rest).toHaveLength(399);
    expect(rest.some((op) => hashOf(op) === "h0" || hashOf(op) === "h1998")).toBe(false);
    // A failed pull's patch comes back before what was put since, and cancels as before.
    group.desire("c1", [{ op: "del", hash: "h2" }]);
    group.restoreEnginePatch(rest);
    group.desire("c1", [put("h2"), { op: "del", hash: "h1996" }]);
    expect(group.takeEnginePatch()).toEqual(rest.filter((op) => hashOf(op) !== "h1996"));
    expect(group.hasPendingPatch()).toBe(false);
  });

  it("echoes each client's changes, and every client's whole set after a reset", () => {
    const group = new ZeroGroup("g", "u");
    group.desire("c1", [put("a"), put("b")]);
    group.desire("c2", [put("b")]);
    group.desire("c1", [{ op: "del", hash: "a" }]);
    expect(group.takeContent(false).desired).toEqual({
      c1: [
        { op: "put", hash: "a" },
        { op: "put", hash: "b" },
        { op: "del", hash: "a" },
      ],
      c2: [{ op: "put", hash: "b" }],
    });
    expect(group.takeContent(false).desired).toEqual({});
    expect(group.takeContent(true).desired).toEqual({
      c1: [{ op: "put", hash: "b" }],
      c2: [{ op: "put", hash: "b" }],
    });
  });

  it("pokes a refused mutation's result once, and deletes it once acknowledged", () => {
    const group = new ZeroGroup("g", "u");
    const result = { error: "app" as const, message: "no" };
    group.refused({ clientID: "c1", id: 3, result });
    group.refused({ clientID: "c1", id: 5, result });
    expect(group.takeContent(false).results).toEqual([
      { op: "put", mutation: { id: { clientID: "c1", id: 3 }, result } },
      { op: "put", mutation: { id: { clientID: "c1", id: 5 }, result } },
    ]);
    group.acknowledged("c1", 4);
    expect(group.takeContent(false).results).toEqual([{ op: "del", id: { clientID: "c1", id: 3 } }]);
    group.acknowledged("c1", 5);
    expect(group.takeContent(false).results).toEqual([{ op: "del", id: { clientID: "c1", id: 5 } }]);
  });

  it("stores only the desires that changed since the last write, not every query of the group", () => {
    const group = new ZeroGroup("g", "u");
    group.desire("c1", [put("a"), put("b")]);
    group.desire("c2", [put("a")]);
    group.takeEnginePatch();
    expect(group.takeStoreChanges()?.desired).toEqual([
      { clientID: "c1", hash: "a", op: "put" },
      { clientID: "c1", hash: "b", op: "put" },
      { clientID: "c2", hash: "a", op: "put" },
    ]);
    // A put again of a query the client desires changes no row.
    group.desire("c1", [put("c"), { op: "del", hash: "a" }, put("b")]);
    group.forgetClients(["c2"]);
    group.takeEnginePatch();
    expect(group.takeStoreChanges()?.desired).toEqual([
      { clientID: "c1", hash: "a", op: "del" },
      { clientID: "c1", hash: "c", op: "put" },
      { clientID: "c2", hash: "a", op: "del" },
    ]);
  });

  it("stores a put with the pull that sends its query, and never one refused before", () => {
    const group = new ZeroGroup("g", "u");
    group.desire("c1", [put("kept")]);
    group.takeEnginePatch();
    group.takeStoreChanges();
    group.desire("c1", [put("x"), put("y"), put("z"), { op: "del", hash: "kept" }]);
    // The poke takes one new query: its put is stored with it, the others wait.
    expect(group.takeEnginePatch(1)).toHaveLength(1);
    const failed = group.takeStoreChanges()!;
    expect(failed.desired).toEqual([
      { clientID: "c1", hash: "kept", op: "del" },
      { clientID: "c1", hash: "x", op: "put" },
    ]);
    // The pull was refused (the group's caps): its patch comes back, the puts are dropped, and
    // meanwhile the client put `kept` again.
    group.desire("c1", [put("kept")]);
    group.restoreStoreChanges(failed);
    group.dropPuts(new Set(["x", "y"]));
    group.takeEnginePatch();
    expect(group.takeStoreChanges()).toEqual({
      desired: [{ clientID: "c1", hash: "z", op: "put" }],
      acknowledged: [],
      forgotten: [],
    });
    expect(group.takeStoreChanges()).toBeNull();
  });

  it("puts every result not yet acknowledged again in a full poke, and stores what was acknowledged", () => {
    const group = new ZeroGroup("g", "u");
    const result = { error: "app" as const, message: "no" };
    group.refused({ clientID: "c1", id: 3, result });
    group.refused({ clientID: "c2", id: 1, result });
    expect(group.takeContent(false).results).toHaveLength(2);
    // The client missed that poke and starts again from its cookie.
    expect(group.takeContent(true).results).toEqual([
      { op: "put", mutation: { id: { clientID: "c1", id: 3 }, result } },
      { op: "put", mutation: { id: { clientID: "c2", id: 1 }, result } },
    ]);
    group.acknowledged("c1", 3);
    group.forgetClients(["c2"]);
    expect(group.takeContent(true).results).toEqual([{ op: "del", id: { clientID: "c1", id: 3 } }]);
    expect(group.takeStoreChanges()).toEqual({
      desired: null,
      acknowledged: [{ clientID: "c1", id: 3 }],
      forgotten: ["c2"],
    });
    expect(group.takeStoreChanges()).toBeNull();
  });
});
