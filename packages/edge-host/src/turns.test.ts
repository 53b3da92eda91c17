import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { send } from "../test/client.js";
import { startWorkerd, type Workerd } from "../test/workerd.js";

// A request that gives other requests their turn midway (a push in slices, a query patch in
// steps) takes that turn in workerd too, which has no `setImmediate`.

describe("a request in turns in workerd", () => {
  let w: Workerd;
  beforeAll(async () => {
    w = await startWorkerd({ bindings: { PUSH_SLICE_MS: "0" } });
  });
  afterAll(() => w.dispose());

  it("commits a push in slices of 32, each a version, and answers every mutation", async () => {
    const mutations = Array.from({ length: 100 }, (_, i) => ({
      type: "custom",
      id: i + 1,
      clientID: "c-alice",
      name: "createTodo",
      args: [{ id: `t${i}`, text: "sliced" }],
      timestamp: 1,
    }));
    const pushed = await send(w.url, "/turns-push/push", {
      user: "alice",
      body: { clientGroupID: "g-alice", pushVersion: 1, mutations },
    });
    expect(pushed.status).toBe(200);
    expect(pushed.json.pushResponse.mutations).toHaveLength(100);
    expect(
      pushed.json.pushResponse.mutations.every((m: { result: object }) => JSON.stringify(m.result) === "{}"),
    ).toBe(true);
    const pulled = await send(w.url, "/turns-push/pull", {
      user: "alice",
      body: { clientGroupID: "g-alice", clientID: "c-alice", cookie: null },
    });
    expect(pulled.status).toBe(200);
    expect(pulled.json.lastMutationIDChanges).toEqual({ "c-alice": 100 });
    // Slices of 32, 32, 32 and 4: the namespace's fourth version.
    expect(pulled.json.cookie).toBe(4);
  });

  it("applies a query patch of many puts in steps", async () => {
    const patch = Array.from({ length: 200 }, (_, i) => ({
      op: "put",
      hash: `q${i}`,
      name: "firstTodos",
      args: { limit: i + 1 },
    }));
    const pulled = await send(w.url, "/turns-queries/pull", {
      user: "alice",
      body: { clientGroupID: "g-alice", clientID: "c-alice", cookie: null, queries: { patch } },
    });
    expect(pulled.status).toBe(200);
    expect(pulled.json.gotQueries).toHaveLength(200);
  });
});
