import { expect, it } from "vitest";
import { CONFORMANCE_ADMIN_KEY as KEY } from "./conformance-config.js";
import { admin, call, freshNamespace, NativeClient } from "./http-client.js";
import type { ConformanceTarget } from "./target.js";

/** Admin routes and knobs. */
export function adminSuite(target: () => ConformanceTarget): void {
  const status = async (ns: string) => (await admin(target(), ns, "status", KEY)).json;

  it("guards admin routes with the admin key", async () => {
    const ns = freshNamespace();
    const missing = await call(target(), "GET", `/${ns}/admin/status`);
    expect(missing.status).toBe(401);
    expect(missing.json).toMatchObject({ error: "unauthorized" });
    const wrong = await admin(target(), ns, "status", "not-the-key");
    expect(wrong.status).toBe(403);
    const asUser = await call(target(), "GET", `/${ns}/admin/status`, { user: "alice" });
    expect(asUser.status).toBe(401);
    const health = await admin(target(), ns, "health", KEY);
    expect(health.status).toBe(200);
    expect(health.json).toMatchObject({ ok: true });
  });

  it("reports status: engine state, knobs and counters", async () => {
    const ns = freshNamespace();
    const client = new NativeClient(target(), ns, "alice");
    await client.sync();
    await client.push([
      { name: "createTodo", args: { id: "t1" } },
      { name: "createThenRefuse", args: { id: "t2" } },
    ]);
    await client.sync();
    const s = await status(ns);
    expect(s.engine).toMatchObject({ watermark: expect.any(Number), floor: expect.any(Number), clients: 1 });
    expect(s.writer).toEqual({ enabled: true });
    expect(s.visibility).toEqual({ enabled: true });
    expect(s.counters).toMatchObject({ pulls: 4, resets: 1, pushes: 1, mutations: 1, appErrors: 1 });
    expect(s.memory.engineBytes).toBeGreaterThan(0);
    expect(s.sizes).toHaveProperty("databaseBytes");
  });

  it("a disabled writer answers push with 503 and stores nothing", async () => {
    const ns = freshNamespace();
    const client = new NativeClient(target(), ns, "alice");
    await client.sync();
    expect((await admin(target(), ns, "writer", KEY, { enabled: false })).json).toEqual({ enabled: false });
    expect((await admin(target(), ns, "writer", KEY)).json).toEqual({ enabled: false });
    const before = (await status(ns)).engine.watermark;
    const refused = await client.push([{ name: "createTodo", args: { id: "t1" } }]);
    expect(refused.status).toBe(503);
    expect(refused.json).toMatchObject({ error: "writer_disabled" });
    expect((await status(ns)).engine.watermark).toBe(before);
    expect((await client.pull()).status).toBe(200);
    await admin(target(), ns, "writer", KEY, { enabled: true });
    const accepted = await client.push([{ name: "createTodo", args: { id: "t1" }, id: 1 }]);
    expect(accepted.json.pushResponse.mutations[0].result).toEqual({});
  });

  it("retention raises the floor and resets a client whose cookie fell below it", async () => {
    const ns = freshNamespace();
    const client = new NativeClient(target(), ns, "alice");
    await client.sync();
    const oldCookie = client.cookie;
    for (let i = 0; i < 4; i++) await client.push([{ name: "createTodo", args: { id: `t${i}` } }]);
    const set = await admin(target(), ns, "retention", KEY, { retainChanges: 1 });
    expect(set.status).toBe(200);
    expect(set.json.retainChanges).toBe(1);
    const s = await status(ns);
    expect(s.retainChanges).toBe(1);
    expect(s.engine.floor).toBeGreaterThan(oldCookie ?? 0);
    const answer = await client.pull(oldCookie);
    expect(answer.json.rowsPatch[0]).toEqual({ op: "clear" });
    client.apply(answer.json);
    expect(client.rows.size).toBe(4);
    expect((await admin(target(), ns, "retention", KEY, { retainChanges: -1 })).status).toBe(400);
  });

  it("invalidate resets every client once", async () => {
    const ns = freshNamespace();
    const client = new NativeClient(target(), ns, "alice");
    await client.push([{ name: "createTodo", args: { id: "t1" } }]);
    await client.sync();
    expect((await admin(target(), ns, "invalidate", KEY, {})).status).toBe(200);
    const reset = await client.pull();
    expect(reset.json.rowsPatch[0]).toEqual({ op: "clear" });
    client.apply(reset.json);
    expect(client.rows.size).toBe(1);
    expect((await client.pull()).json.unchanged).toBe(true);
  });

  it("visibility off shows every row; on again hides them, from clients that synced too", async () => {
    const ns = freshNamespace();
    await new NativeClient(target(), ns, "alice").push([{ name: "createTodo", args: { id: "a1" } }]);
    expect((await admin(target(), ns, "visibility", KEY, { enabled: false })).json).toEqual({
      enabled: false,
      invalidated: true,
    });
    const bob = new NativeClient(target(), ns, "bob");
    await bob.sync();
    expect(bob.row("todo", { id: "a1" })).toBeDefined();
    await admin(target(), ns, "visibility", KEY, { enabled: true });
    await bob.sync();
    expect(bob.row("todo", { id: "a1" })).toBeUndefined();
  });

  it("fires each fault once, with nothing stored unless the commit came first", async () => {
    const ns = freshNamespace();
    const client = new NativeClient(target(), ns, "alice");
    await client.sync();
    const arm = (point: string, kind: string) => admin(target(), ns, "fault", KEY, { point, kind });

    expect((await arm("push_before_mutation", "error")).json.faults).toEqual({
      push_before_mutation: "error",
    });
    const before = await client.push([{ name: "createTodo", args: { id: "t1" }, id: 1 }]);
    expect(before.status).toBe(500);
    expect(before.json).toMatchObject({ error: "fault_injected" });

    await arm("push_after_write_before_commit", "quota");
    const quota = await client.push([{ name: "createTodo", args: { id: "t1" }, id: 1 }]);
    expect(quota.status).toBe(507);
    expect(quota.json).toMatchObject({ error: "quota_exceeded" });
    await client.sync();
    expect(client.lastMutationID).toBe(0);
    expect(client.rows.size).toBe(0);

    await arm("push_after_commit_before_response", "error");
    const after = await client.push([{ name: "createTodo", args: { id: "t1" }, id: 1 }]);
    expect(after.status).toBe(500);
    const retried = await client.push([{ name: "createTodo", args: { id: "t1" }, id: 1 }]);
    expect(retried.json.pushResponse.mutations[0].result).toMatchObject({ error: "alreadyProcessed" });

    await arm("pull_during_tx", "error");
    expect((await client.pull()).status).toBe(500);
    await arm("pull_after_commit", "quota");
    expect((await client.pull()).status).toBe(507);
    await client.sync();
    expect(client.row("todo", { id: "t1" })).toBeDefined();
    expect(client.lastMutationID).toBe(1);

    await arm("pull_during_tx", "error");
    expect((await admin(target(), ns, "fault", KEY, { clear: true })).json.faults).toEqual({});
    expect((await client.pull()).status).toBe(200);
    expect((await admin(target(), ns, "fault", KEY, { point: "nowhere", kind: "error" })).status).toBe(400);
    expect((await status(ns)).faults).toEqual({});
  });

  it("drops the next push response after committing the push", async () => {
    const ns = freshNamespace();
    const client = new NativeClient(target(), ns, "alice");
    await client.sync();
    expect((await admin(target(), ns, "drop-next-push-response", KEY, {})).status).toBe(200);
    await expect(client.push([{ name: "createTodo", args: { id: "t1" } }])).rejects.toThrow();
    await client.sync();
    expect(client.lastMutationID).toBe(1);
    expect(client.row("todo", { id: "t1" })).toBeDefined();
    const next = await client.push([{ name: "createTodo", args: { id: "t2" } }]);
    expect(next.json.pushResponse.mutations[0].result).toEqual({});
    expect((await status(ns)).dropNextPushResponse).toBe(false);
  });

  it("keeps every knob across a restart", async (context) => {
    if (!target().restart) return context.skip();
    const ns = freshNamespace();
    const client = new NativeClient(target(), ns, "alice");
    await client.push([{ name: "createTodo", args: { id: "t1" } }]);
    await admin(target(), ns, "writer", KEY, { enabled: false });
    await admin(target(), ns, "visibility", KEY, { enabled: false });
    await admin(target(), ns, "retention", KEY, { retainChanges: 7 });
    await admin(target(), ns, "fault", KEY, { point: "pull_after_commit", kind: "quota" });
    await admin(target(), ns, "drop-next-push-response", KEY, {});
    const counters = (await status(ns)).counters;
    await target().restart!();
    const s = await status(ns);
    expect(s).toMatchObject({
      writer: { enabled: false },
      visibility: { enabled: false },
      retainChanges: 7,
      faults: { pull_after_commit: "quota" },
      dropNextPushResponse: true,
    });
    expect(s.counters.pushes).toBe(counters.pushes);
    expect((await client.pull()).status).toBe(507);
  });
}
