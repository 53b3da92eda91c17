import { expect, it } from "vitest";
import { CONFORMANCE_MAX_CHANGE_ROWS as CAP, CONFORMANCE_ADMIN_KEY as KEY } from "./conformance-config.js";
import { runHttpConvergence } from "./convergence.js";
import { admin, call, freshNamespace, NativeClient } from "./http-client.js";
import type { ConformanceTarget } from "./target.js";

/**
 * A client that pulls until `unchanged` must hold exactly what a fresh pull of its user shows.
 * Each test here is a way that once failed.
 */
export function correctnessSuite(target: () => ConformanceTarget): void {
  /** What a new client group of the same user holds after syncing. */
  async function fresh(ns: string, user: string) {
    const client = new NativeClient(target(), ns, user);
    await client.sync();
    return [...client.rows.keys()].sort();
  }

  it("sends del for a row a capped answer delivered ahead of its cookie", async () => {
    const ns = freshNamespace();
    const writer = new NativeClient(target(), ns, "alice");
    const reader = new NativeClient(target(), ns, "alice");
    await writer.push([{ name: "setTodo", args: { id: "R", owner: "alice", text: "first" } }]);
    await reader.sync();
    // R gone, a version bigger than the cap, R back: the next answer is R (current) alone.
    await writer.push([{ name: "removeTodo", args: { id: "R" } }]);
    await writer.push([{ name: "bulkReplace", args: { prefix: "s", count: CAP, owner: "alice" } }]);
    await writer.push([{ name: "setTodo", args: { id: "R", owner: "alice", text: "again" } }]);
    const capped = await reader.pull();
    expect(capped.json.rowsPatch.map((op: { value?: { id: string } }) => op.value?.id)).toEqual(["R"]);
    reader.apply(capped.json);
    await writer.push([{ name: "removeTodo", args: { id: "R" } }]);
    await reader.sync();
    expect(reader.row("todo", { id: "R" })).toBeUndefined();
    expect([...reader.rows.keys()].sort()).toEqual(await fresh(ns, "alice"));
  });

  it("takes back a row a capped answer gave once its user may no longer see it", async () => {
    const ns = freshNamespace();
    const writer = new NativeClient(target(), ns, "bob");
    const alice = new NativeClient(target(), ns, "alice");
    await writer.push([{ name: "setTodo", args: { id: "x", owner: "alice" } }]);
    await alice.sync();
    // x changes, and again after a version of CAP rows: the capped answer gives x alone, with
    // its newest value, newer than the answer's cookie.
    await writer.push([{ name: "setTodo", args: { id: "x", owner: "alice", text: "first" } }]);
    await writer.push([{ name: "bulkReplace", args: { prefix: "a", count: CAP, owner: "alice" } }]);
    await writer.push([{ name: "setTodo", args: { id: "x", owner: "alice", text: "newest" } }]);
    const capped = await alice.pull();
    expect(
      capped.json.rowsPatch.map(
        (op: { value?: { id: string; text: string } }) => op.value && `${op.value.id} ${op.value.text}`,
      ),
    ).toEqual(["x newest"]);
    alice.apply(capped.json);
    await writer.push([{ name: "setTodo", args: { id: "x", owner: "bob" } }]);
    await alice.sync();
    expect(alice.row("todo", { id: "x" })).toBeUndefined();
    expect([...alice.rows.keys()].sort()).toEqual(await fresh(ns, "alice"));
  });

  it("compares typed columns with string claims the same way before and after a change", async () => {
    const ns = freshNamespace();
    const writer = new NativeClient(target(), ns, "writer");
    // User "1" sees cards whose uid is 1, and flagged cards of score 0.1 + 0.2 (not 0.3).
    await writer.push([
      { name: "putCard", args: { id: 1, uid: 1, score: 0.5, flag: false } },
      { name: "putCard", args: { id: 2, uid: 9, score: 0.1 + 0.2, flag: true } },
      { name: "putCard", args: { id: 3, uid: 9, score: 0.3, flag: true } },
    ]);
    const one = new NativeClient(target(), ns, "1");
    await one.sync();
    expect([...one.rows.keys()].sort()).toEqual(['card:{"id":1}', 'card:{"id":2}']);
    await writer.push([
      { name: "putCard", args: { id: 1, uid: 7, score: 0.5, flag: false } },
      { name: "putCard", args: { id: 2, uid: 9, score: 0.1 + 0.2, flag: false } },
    ]);
    await one.sync();
    expect(one.rows.size).toBe(0);
  });

  it.each([
    ["INSERT OR REPLACE", { name: "setTodo", args: { id: "a", owner: "bob", how: "replace" } }],
    ["UPDATE OR REPLACE", { name: "moveCard", args: { from: 5, to: 1 } }],
  ])("sees the rows %s takes away", async (_, mutation) => {
    const ns = freshNamespace();
    const writer = new NativeClient(target(), ns, "bob");
    await writer.push([
      { name: "setTodo", args: { id: "a", owner: "1" } },
      { name: "putCard", args: { id: 1, uid: 1, score: 0, flag: false } },
      { name: "putCard", args: { id: 5, uid: 2, score: 0, flag: false } },
    ]);
    const one = new NativeClient(target(), ns, "1");
    await one.sync();
    expect(one.rows.size).toBe(2);
    expect((await writer.push([mutation])).json.pushResponse.mutations[0].result).toEqual({});
    await one.sync();
    expect([...one.rows.keys()].sort()).toEqual(await fresh(ns, "1"));
    expect(one.rows.size).toBe(1);
  });

  it("includes a further version only if all of it fits the caps", async () => {
    const ns = freshNamespace();
    const writer = new NativeClient(target(), ns, "alice");
    const reader = new NativeClient(target(), ns, "alice");
    await reader.sync();
    await writer.push([{ name: "setTodo", args: { id: "one", owner: "alice" } }]);
    await writer.push([{ name: "bulkReplace", args: { prefix: "b", count: CAP, owner: "alice" } }]);
    await writer.push([{ name: "setTodo", args: { id: "last", owner: "alice" } }]);
    const sizes: number[] = [];
    for (const page of await reader.sync()) if (!page.json.unchanged) sizes.push(page.json.rowsPatch.length);
    expect(sizes).toEqual([1, CAP, 1]);
  });

  it("resets every client when visibility is switched, so none keeps what it may not see", async () => {
    const ns = freshNamespace();
    const bob = new NativeClient(target(), ns, "bob");
    const alice = new NativeClient(target(), ns, "alice");
    await bob.push([{ name: "setTodo", args: { id: "bobs", owner: "bob" } }]);
    await alice.sync();
    expect(alice.rows.size).toBe(0);
    const off = await admin(target(), ns, "visibility", KEY, { enabled: false });
    expect(off.json).toEqual({ enabled: false, invalidated: true });
    await alice.sync();
    expect(alice.row("todo", { id: "bobs" })).toMatchObject({ owner: "bob" });
    const on = await admin(target(), ns, "visibility", KEY, { enabled: true });
    expect(on.json).toEqual({ enabled: true, invalidated: true });
    const again = await admin(target(), ns, "visibility", KEY, { enabled: true });
    expect(again.json).toEqual({ enabled: true, invalidated: false });
    await alice.sync();
    expect(alice.rows.size).toBe(0);
  });

  it("reads integers beyond 2^53 exactly in a mutator and writes them back", async () => {
    const ns = freshNamespace();
    const client = new NativeClient(target(), ns, "alice");
    const big = "9007199254740993";
    await client.push([{ name: "putItem", args: { a: "x", b: big } }]);
    const copy = await client.push([{ name: "copyItem", args: { a: "x", b: big, to: "y" } }]);
    expect(copy.json.pushResponse.mutations[0]).toMatchObject({ result: {} });
    const raw = await fetch(`${target().url}/${ns}/pull`, {
      method: "POST",
      headers: { authorization: await target().auth("alice"), "content-type": "application/json" },
      body: JSON.stringify({ clientGroupID: "g-raw", clientID: "c-raw", cookie: null }),
    });
    // Read as a client reads it, with JSON.parse: beyond 2^53 the value is its decimal text.
    const rows = ((await raw.json()) as { rowsPatch: { value?: { a: string; b: unknown } }[] }).rowsPatch
      .filter((op) => op.value?.a === "x" || op.value?.a === "y")
      .map((op) => op.value);
    expect(rows).toEqual([
      expect.objectContaining({ a: "x", b: big }),
      expect.objectContaining({ a: "y", b: big }),
    ]);
  });

  it("refuses a lone surrogate with 400 and stores nothing", async () => {
    const ns = freshNamespace();
    const client = new NativeClient(target(), ns, "alice");
    await client.sync();
    const body = `{"clientGroupID":"${client.clientGroupID}","pushVersion":1,"mutations":[{"type":"custom","id":1,"clientID":"${client.clientID}","name":"createTodo","args":[{"id":"t","text":"a\\ud800b"}],"timestamp":1}]}`;
    const refused = await call(target(), "POST", `/${ns}/push`, {
      user: "alice",
      rawBody: body,
      headers: { "content-type": "application/json" },
    });
    expect(refused.status).toBe(400);
    expect(refused.json).toMatchObject({ error: "bad_request", message: expect.stringMatching(/surrogate/) });
    expect((await client.pull()).json.unchanged).toBe(true);
  });

  it("answers an unsupported push version with the status of its code", async () => {
    const ns = freshNamespace();
    const client = new NativeClient(target(), ns, "alice");
    const answer = await client.push([{ name: "createTodo", args: { id: "t" } }], { pushVersion: 2 });
    expect(answer.json.error).toBe("unsupported_version");
    expect(answer.status).toBe(400);
  });
}

/** For hosts that can write outside a push in the suite's process (`writeOutsidePush`). */
export function outsideWritesSuite(target: () => ConformanceTarget): void {
  it("delivers rows written outside a push to incremental pulls", async () => {
    const ns = freshNamespace();
    const client = new NativeClient(target(), ns, "alice");
    await client.sync();
    const cookie = client.cookie;
    await target().writeOutsidePush!(
      ns,
      "INSERT INTO todo (id, owner, text, done, sort) VALUES (?, ?, '', 0, 0)",
      ["outside", "alice"],
    );
    await client.sync();
    expect(client.cookie).toBeGreaterThan(cookie!);
    expect(client.row("todo", { id: "outside" })).toMatchObject({ owner: "alice" });
  });
}

/** Seeded random workloads over HTTP (see convergence.ts); WEIR_SEED replays one. */
export function convergenceSuite(target: () => ConformanceTarget): void {
  const replay = process.env.WEIR_SEED;
  const seeds =
    replay === undefined ? [1, 2, 3].map(() => Math.floor(Math.random() * 2 ** 31)) : [Number(replay)];
  it.each(seeds)("converges under a random workload (seed %i)", async (seed) => {
    await runHttpConvergence(target(), { seed, operations: 400 });
  });
}
