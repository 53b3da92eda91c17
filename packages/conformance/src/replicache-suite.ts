import { expect, it } from "vitest";
import { call, freshNamespace } from "./http-client.js";
import type { ConformanceTarget } from "./target.js";

interface Patch {
  op: string;
  key?: string;
  value?: unknown;
}

/** Replicache's pull/push v1, as the stock client sends them. */
export function replicacheSuite(target: () => ConformanceTarget): void {
  const pull = (ns: string, user: string, body: Record<string, unknown>) =>
    call(target(), "POST", `/${ns}/replicache/pull`, {
      user,
      body: { pullVersion: 1, schemaVersion: "", profileID: "p", ...body },
    });
  const push = (ns: string, user: string, clientGroupID: string, mutations: Array<Record<string, unknown>>) =>
    call(target(), "POST", `/${ns}/replicache/push`, {
      user,
      body: {
        pushVersion: 1,
        clientGroupID,
        profileID: "p",
        schemaVersion: "",
        mutations: mutations.map((m) => ({ clientID: "rc1", timestamp: 12.5, ...m })),
      },
    });

  it("pulls with keys <table>/<key> and pushes answering {}", async () => {
    const ns = freshNamespace();
    const first = await pull(ns, "alice", { clientGroupID: "rg1", cookie: null });
    expect(first.status).toBe(200);
    expect(first.json).toMatchObject({ lastMutationIDChanges: {}, patch: [{ op: "clear" }] });
    const pushed = await push(ns, "alice", "rg1", [
      { id: 1, name: "createTodo", args: { id: "t1", text: "milk" } },
      { id: 2, name: "putItem", args: { a: "x/y~z", b: 7, v: [1], data: null } },
    ]);
    expect(pushed.status).toBe(200);
    expect(pushed.json).toEqual({});
    const next = await pull(ns, "alice", { clientGroupID: "rg1", cookie: first.json.cookie });
    expect(next.json.lastMutationIDChanges).toEqual({ rc1: 2 });
    const patch = next.json.patch as Patch[];
    expect(patch).toContainEqual({
      op: "put",
      key: "todo/t1",
      value: { id: "t1", owner: "alice", text: "milk", done: false, sort: 0 },
    });
    expect(patch).toContainEqual({
      op: "put",
      key: "item/x~1y~0z/7",
      value: { a: "x/y~z", b: 7, v: [1], data: null },
    });
    await push(ns, "alice", "rg1", [{ id: 3, name: "deleteTodo", args: { id: "t1" } }]);
    const after = await pull(ns, "alice", { clientGroupID: "rg1", cookie: next.json.cookie });
    expect(after.json.patch).toEqual([{ op: "del", key: "todo/t1" }]);
    const caughtUp = await pull(ns, "alice", { clientGroupID: "rg1", cookie: after.json.cookie });
    expect(caughtUp.json).toEqual({ cookie: after.json.cookie, lastMutationIDChanges: {}, patch: [] });
  });

  it("skips a replayed mutation and ignores one from the future", async () => {
    const ns = freshNamespace();
    await push(ns, "alice", "rg1", [{ id: 1, name: "createTodo", args: { id: "t1", text: "once" } }]);
    const replay = await push(ns, "alice", "rg1", [
      { id: 1, name: "updateTodo", args: { id: "t1", text: "twice" } },
      { id: 5, name: "createTodo", args: { id: "t5" } },
      { id: 2, name: "updateTodo", args: { id: "t1", done: true } },
    ]);
    expect(replay.status).toBe(200);
    expect(replay.json).toEqual({});
    const pulled = await pull(ns, "alice", { clientGroupID: "rg1", cookie: null });
    expect(pulled.json.lastMutationIDChanges).toEqual({ rc1: 2 });
    const puts = (pulled.json.patch as Patch[]).filter((op) => op.op === "put");
    expect(puts).toEqual([
      { op: "put", key: "todo/t1", value: { id: "t1", owner: "alice", text: "once", done: true, sort: 0 } },
    ]);
  });

  it("answers VersionNotSupported for pull and push versions it does not speak", async () => {
    const ns = freshNamespace();
    const pulled = await pull(ns, "alice", { clientGroupID: "rg1", cookie: null, pullVersion: 2 });
    expect(pulled.status).toBe(200);
    expect(pulled.json).toEqual({ error: "VersionNotSupported", versionType: "pull" });
    const pushed = await call(target(), "POST", `/${ns}/replicache/push`, {
      user: "alice",
      body: { pushVersion: 0, clientGroupID: "rg1", mutations: [] },
    });
    expect(pushed.status).toBe(200);
    expect(pushed.json).toEqual({ error: "VersionNotSupported", versionType: "push" });
  });

  it("refuses another user's client group with 403", async () => {
    const ns = freshNamespace();
    await push(ns, "alice", "rg-alice", [{ id: 1, name: "createTodo", args: { id: "t1" } }]);
    const stolen = await pull(ns, "bob", { clientGroupID: "rg-alice", cookie: null });
    expect(stolen.status).toBe(403);
    expect(stolen.json).toMatchObject({ error: "forbidden" });
  });
}
