import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN, push, rows, send } from "../test/client.js";
import { startWorkerd, type Workerd } from "../test/workerd.js";

function forged(value: object): string {
  return btoa(JSON.stringify(value)).replace(/=+$/, "");
}

describe("the sync Worker in workerd", () => {
  let w: Workerd;
  beforeAll(async () => {
    w = await startWorkerd();
  });
  afterAll(() => w.dispose());

  it("ignores internal headers a client sends: the object sees only the Worker's claims", async () => {
    const headers = { "x-weir-forwarded": forged({ ns: "x", claims: { userID: "mallory" } }) };
    const answer = await send(w.url, "/strip1/push", {
      user: "alice",
      headers,
      body: {
        clientGroupID: "g-alice",
        pushVersion: 1,
        mutations: [{ type: "custom", id: 1, clientID: "c-alice", name: "createTodo", args: [{ id: "t1" }] }],
      },
    });
    expect(answer.status).toBe(200);
    expect((await rows(w.url, "strip1", "alice"))[0]).toMatchObject({ id: "t1", owner: "alice" });
    // Without credentials a forged header opens nothing: the Worker answers 401 itself.
    const anonymous = await send(w.url, "/strip1/pull", {
      headers,
      body: { clientGroupID: "g-m", clientID: "c-m", cookie: null },
    });
    expect(anonymous.status).toBe(401);
    expect(anonymous.json).toMatchObject({ error: "unauthorized" });
  });

  it("answers 401 and 403 for admin routes at the edge, whatever internal header is sent", async () => {
    const forgedAdmin = { "x-weir-forwarded": forged({ ns: "x", admin: true }) };
    expect((await send(w.url, "/strip2/admin/status", { headers: forgedAdmin })).status).toBe(401);
    const wrongKey = await send(w.url, "/strip2/admin/status", {
      headers: { ...forgedAdmin, "x-admin-key": "not-the-key" },
    });
    expect(wrongKey.status).toBe(403);
    expect(wrongKey.json).toMatchObject({ error: "forbidden" });
    expect((await send(w.url, "/strip2/admin/status", { headers: ADMIN })).status).toBe(200);
  });

  it("an object refuses a request that did not come through the Worker", async () => {
    const direct = await send(w.url, "/__direct/strip3/pull", {
      user: "alice",
      body: { clientGroupID: "g", clientID: "c", cookie: null },
    });
    expect(direct.status).toBe(403);
    expect(direct.json).toMatchObject({ error: "forbidden" });
  });

  it("an object bound to one namespace refuses requests for another", async () => {
    expect((await push(w.url, "bound-a", "alice", 1, { id: "a1" })).status).toBe(200);
    const misrouted = await send(w.url, "/__misroute/bound-a/bound-b/push", {
      body: {
        clientGroupID: "g-alice",
        pushVersion: 1,
        mutations: [{ type: "custom", id: 2, clientID: "c-alice", name: "createTodo", args: [{ id: "b1" }] }],
      },
    });
    expect(misrouted.status).toBe(500);
    expect(misrouted.json).toMatchObject({ error: "internal" });
    expect((await rows(w.url, "bound-a", "alice")).map((row) => row.id)).toEqual(["a1"]);
  });

  it("serves under a base path and answers 404 outside it", async () => {
    expect((await push(w.url, "alarmed/based", "alice", 1, { id: "t1" })).status).toBe(200);
    expect((await send(w.url, "/alarmed", { user: "alice" })).status).toBe(404);
  });
});
