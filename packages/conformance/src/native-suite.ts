import { expect, it } from "vitest";
import { CONFORMANCE_MAX_CHANGE_ROWS } from "./conformance-config.js";
import { call, freshNamespace, NativeClient } from "./http-client.js";
import type { ConformanceTarget } from "./target.js";

/** The native dialect: pull and push as a Zero-style client sends them. */
export function nativeSuite(target: () => ConformanceTarget): void {
  it("a new client pulls a reset, then is caught up", async () => {
    const client = new NativeClient(target(), freshNamespace(), "alice");
    const first = await client.pull();
    expect(first.status).toBe(200);
    expect(first.json).toMatchObject({ lastMutationIDChanges: {}, rowsPatch: [{ op: "clear" }] });
    expect(typeof first.json.cookie).toBe("number");
    const second = await client.pull(first.json.cookie);
    expect(second.json).toEqual({ cookie: first.json.cookie, unchanged: true });
    const asString = await client.pull(String(first.json.cookie) as unknown as number);
    expect(asString.json).toEqual({ cookie: first.json.cookie, unchanged: true });
  });

  it("applies pushed mutations and delivers rows and last mutation ids", async () => {
    const client = new NativeClient(target(), freshNamespace(), "alice");
    await client.sync();
    const pushed = await client.push([
      { name: "createTodo", args: { id: "t1", text: "milk", sort: 1.5 } },
      { name: "createTodoSql", args: { id: "t2", text: "eggs", sort: 2 } },
    ]);
    expect(pushed.status).toBe(200);
    expect(pushed.json).toEqual({
      pushResponse: {
        mutations: [
          { id: { clientID: client.clientID, id: 1 }, result: {} },
          { id: { clientID: client.clientID, id: 2 }, result: {} },
        ],
      },
    });
    await client.sync();
    expect(client.lastMutationID).toBe(2);
    expect(client.row("todo", { id: "t1" })).toEqual({
      id: "t1",
      owner: "alice",
      text: "milk",
      done: false,
      sort: 1.5,
    });
    expect(client.row("todo", { id: "t2" })).toMatchObject({ text: "eggs", done: false });

    await client.push([
      { name: "updateTodo", args: { id: "t1", done: true } },
      { name: "deleteTodo", args: { id: "t2" } },
    ]);
    await client.sync();
    expect(client.row("todo", { id: "t1" })).toMatchObject({ text: "milk", done: true });
    expect(client.row("todo", { id: "t2" })).toBeUndefined();
    expect(client.lastMutationID).toBe(4);
  });

  it("round-trips a composite key and every column type", async () => {
    const client = new NativeClient(target(), freshNamespace(), "alice");
    await client.sync();
    const value = { a: "x/y~z", b: 2, v: { nested: [1, "two", null, 0.1] }, data: "00ff7f" };
    await client.push([{ name: "putItem", args: value }]);
    await client.sync();
    expect(client.row("item", { a: "x/y~z", b: 2 })).toEqual(value);
    await client.push([{ name: "putItem", args: { a: "x/y~z", b: 2, v: null, data: null } }]);
    await client.sync();
    expect(client.row("item", { a: "x/y~z", b: 2 })).toEqual({ a: "x/y~z", b: 2, v: null, data: null });
    await client.push([{ name: "deleteItem", args: { a: "x/y~z", b: 2 } }]);
    await client.sync();
    expect(client.row("item", { a: "x/y~z", b: 2 })).toBeUndefined();
  });

  it("does not run a replayed mutation again", async () => {
    const client = new NativeClient(target(), freshNamespace(), "alice");
    await client.push([{ name: "createTodo", args: { id: "t1", text: "once" } }]);
    const again = await client.push([{ name: "updateTodo", args: { id: "t1", text: "twice" }, id: 1 }]);
    expect(again.status).toBe(200);
    expect(again.json.pushResponse.mutations[0].result).toMatchObject({ error: "alreadyProcessed" });
    expect(typeof again.json.pushResponse.mutations[0].result.details).toBe("string");
    await client.sync();
    expect(client.row("todo", { id: "t1" })).toMatchObject({ text: "once" });
  });

  it("stops the batch at an out-of-order mutation", async () => {
    const client = new NativeClient(target(), freshNamespace(), "alice");
    await client.push([{ name: "createTodo", args: { id: "t1" } }]);
    const ooo = await client.push([
      { name: "createTodo", args: { id: "t3" }, id: 3 },
      { name: "createTodo", args: { id: "t4" }, id: 4 },
    ]);
    expect(ooo.status).toBe(200);
    expect(ooo.json.pushResponse).toMatchObject({
      kind: "PushFailed",
      origin: "server",
      reason: "oooMutation",
      mutationIDs: [
        { clientID: client.clientID, id: 3 },
        { clientID: client.clientID, id: 4 },
      ],
    });
    await client.sync();
    expect(client.lastMutationID).toBe(1);
    expect(client.row("todo", { id: "t3" })).toBeUndefined();
  });

  it("rolls back a refused mutation, advances its id, and skips its deferred effects", async () => {
    const client = new NativeClient(target(), freshNamespace(), "alice");
    const pushed = await client.push([
      { name: "createThenRefuse", args: { id: "t1" } },
      { name: "noSuchMutator", args: {} },
      { name: "createTodo", args: { id: "t2" } },
      { name: "createTodo", args: { id: "t2" } },
      { name: "createTodo", args: { id: "t3", done: "yes" } },
    ]);
    const results = pushed.json.pushResponse.mutations.map((m: { result: unknown }) => m.result);
    expect(results[0]).toEqual({ error: "app", message: "refused on purpose", details: { id: "t1" } });
    expect(results[1]).toMatchObject({ error: "app", message: expect.stringContaining("noSuchMutator") });
    expect(results[2]).toEqual({});
    expect(results[3]).toMatchObject({ error: "app" });
    expect(results[4]).toMatchObject({ error: "app", message: expect.stringContaining("done") });
    await client.sync();
    expect(client.lastMutationID).toBe(5);
    expect(client.row("todo", { id: "t1" })).toBeUndefined();
    expect(client.row("todo", { id: "t2" })).toBeDefined();
    const effects = target().effects?.();
    if (effects) {
      expect(effects).toContainEqual({ name: "createTodo", id: "t2" });
      expect(effects).not.toContainEqual({ name: "createThenRefuse", id: "t1" });
    }
  });

  it("keeps the mutations around a refused one, each applied and its effects run once", async () => {
    const client = new NativeClient(target(), freshNamespace(), "alice");
    const pushed = await client.push([
      { name: "createTodo", args: { id: "around-before" } },
      { name: "createThenRefuse", args: { id: "around-refused" } },
      { name: "createTodo", args: { id: "around-after" } },
    ]);
    const results = pushed.json.pushResponse.mutations.map((m: { result: unknown }) => m.result);
    expect(results).toEqual([
      {},
      { error: "app", message: "refused on purpose", details: { id: "around-refused" } },
      {},
    ]);
    await client.sync();
    expect(client.lastMutationID).toBe(3);
    expect(client.row("todo", { id: "around-before" })).toBeDefined();
    expect(client.row("todo", { id: "around-refused" })).toBeUndefined();
    expect(client.row("todo", { id: "around-after" })).toBeDefined();
    const effects = target().effects?.();
    if (effects) {
      const ran = (id: string) => effects.filter((effect) => effect.id === id).length;
      expect([ran("around-before"), ran("around-refused"), ran("around-after")]).toEqual([1, 0, 1]);
    }
  });

  it("refuses a mutator that returns a Promise without storing anything", async () => {
    const client = new NativeClient(target(), freshNamespace(), "alice");
    const pushed = await client.push([{ name: "returnsPromise", args: {} }]);
    expect(pushed.status).toBe(500);
    // Why (the mutator must be synchronous) goes to the server's log, under the answer's requestId.
    expect(pushed.json).toMatchObject({ error: "internal", requestId: expect.any(String) });
    await client.sync();
    expect(client.lastMutationID).toBe(0);
  });

  it("answers a cookie from the future with 409", async () => {
    const client = new NativeClient(target(), freshNamespace(), "alice");
    const answer = await client.pull(1_000_000);
    expect(answer.status).toBe(409);
    expect(answer.json).toMatchObject({ error: expect.any(String), message: expect.any(String) });
  });

  it("answers an unsupported push version in both shapes", async () => {
    const client = new NativeClient(target(), freshNamespace(), "alice");
    const answer = await client.push([{ name: "createTodo", args: { id: "t1" } }], { pushVersion: 2 });
    expect(answer.status).toBe(400);
    expect(answer.json).toMatchObject({
      error: expect.any(String),
      message: expect.any(String),
      pushResponse: { kind: "PushFailed", reason: "unsupportedPushVersion" },
    });
  });

  it("caps a pull at a change boundary and reports ids only with their changes", async () => {
    const client = new NativeClient(target(), freshNamespace(), "alice");
    await client.sync();
    const perMutation = Math.ceil(CONFORMANCE_MAX_CHANGE_ROWS * 0.6);
    const big = CONFORMANCE_MAX_CHANGE_ROWS * 2;
    // A push commits as one version: four pushes make four versions.
    for (const n of [1, 2, 3])
      await client.push([{ name: "bulkCreate", args: { prefix: `b${n}`, count: perMutation } }]);
    await client.push([{ name: "bulkCreate", args: { prefix: "big", count: big } }]);
    let delivered = 0;
    const pages = await client.sync();
    const seen = new Set<string>();
    for (const page of pages.slice(0, -1)) {
      const prefixes: string[] = page.json.rowsPatch
        .filter((op: { op: string }) => op.op === "put")
        .map((op: { value: { id: string } }) => op.value.id.split("-")[0]);
      const groups = [...new Set(prefixes)];
      expect(groups.length).toBeGreaterThan(0);
      // Whole versions only: a version never spans pages, and the last one began below the cap.
      for (const group of groups) {
        expect(seen.has(group)).toBe(false);
        seen.add(group);
      }
      const beforeLast = prefixes.filter((prefix) => prefix !== groups[groups.length - 1]).length;
      expect(beforeLast).toBeLessThan(CONFORMANCE_MAX_CHANGE_ROWS);
      delivered += prefixes.length;
      const reported = page.json.lastMutationIDChanges[client.clientID];
      if (reported !== undefined) expect(reported).toBe(seen.size);
    }
    expect(pages.length).toBeGreaterThan(2);
    expect(delivered).toBe(3 * perMutation + big);
    expect(client.lastMutationID).toBe(4);
  });

  it("lets a client group belong to one user only (403)", async () => {
    const ns = freshNamespace();
    const alice = new NativeClient(target(), ns, "alice");
    await alice.push([{ name: "createTodo", args: { id: "a1" } }]);
    await alice.sync();
    const bob = new NativeClient(target(), ns, "bob", alice.clientGroupID, "bob-client");
    const pulled = await bob.pull(null);
    expect(pulled.status).toBe(403);
    expect(pulled.json).toMatchObject({ error: "forbidden" });
    const pushed = await bob.push([{ name: "createTodo", args: { id: "b1" } }]);
    expect(pushed.status).toBe(403);
    // Client ids live within their group: the same id in bob's own group is another client.
    const sameClientID = new NativeClient(target(), ns, "bob", "bobs-group", alice.clientID);
    await sameClientID.push([{ name: "createTodo", args: { id: "b2" } }]);
    await alice.sync();
    expect(alice.rows.size).toBe(1);
    expect(alice.lastMutationID).toBe(1);
  });

  it("never shows a user the rows their visibility filter hides", async () => {
    const ns = freshNamespace();
    const alice = new NativeClient(target(), ns, "alice");
    const bob = new NativeClient(target(), ns, "bob");
    await alice.push([{ name: "createTodo", args: { id: "secret", text: "alice only" } }]);
    await bob.push([{ name: "createTodo", args: { id: "bobs" } }]);
    await alice.push([{ name: "updateTodo", args: { id: "secret", text: "still alice only" } }]);
    await bob.sync();
    expect([...bob.rows.values()].map((row) => row.id)).toEqual(["bobs"]);
    const refused = await bob.push([{ name: "updateTodo", args: { id: "secret", text: "bob was here" } }]);
    expect(refused.json.pushResponse.mutations[0].result).toMatchObject({
      error: "app",
      message: "not your todo",
    });
    await alice.push([{ name: "deleteTodo", args: { id: "secret" } }]);
    const pages = await bob.sync();
    for (const page of pages) expect(JSON.stringify(page.json)).not.toContain("alice only");
    await alice.sync();
    expect(alice.row("todo", { id: "secret" })).toBeUndefined();
    expect(alice.row("todo", { id: "bobs" })).toBeUndefined();
  });

  it("answers pull and push without credentials with 401", async () => {
    const ns = freshNamespace();
    for (const path of ["pull", "push", "replicache/pull", "replicache/push"]) {
      const answer = await call(target(), "POST", `/${ns}/${path}`, { body: {} });
      expect(answer.status).toBe(401);
      expect(answer.json).toMatchObject({ error: "unauthorized", message: expect.any(String) });
    }
  });
}
