import { expect, it } from "vitest";
import { CONFORMANCE_ADMIN_KEY as KEY } from "./conformance-config.js";
import { type Answer, admin, call, freshNamespace, NativeClient } from "./http-client.js";
import type { ConformanceTarget } from "./target.js";

function expectError(answer: Answer, status: number, error?: string): void {
  expect(answer.status).toBe(status);
  expect(answer.json).toMatchObject({ error: error ?? expect.any(String), message: expect.any(String) });
}

/** Malformed requests: always a 4xx with `{ error, message }`, and nothing changes. */
export function badInputSuite(target: () => ConformanceTarget): void {
  it("refuses bad namespaces, unknown routes and wrong methods", async () => {
    const t = target();
    expectError(await call(t, "POST", "/bad.ns/pull", { user: "alice", body: {} }), 400, "bad_request");
    expectError(await call(t, "POST", `/${"n".repeat(65)}/pull`, { user: "alice", body: {} }), 400);
    expectError(await call(t, "POST", "/ns%20x/pull", { user: "alice", body: {} }), 400);
    expectError(await call(t, "GET", "/ns/nothing-here", { user: "alice" }), 404, "not_found");
    expectError(await call(t, "GET", "/", { user: "alice" }), 404);
    expectError(await call(t, "GET", "/ns/admin/nothing", { adminKey: KEY }), 404);
    const wrongMethod = await call(t, "GET", "/ns/pull", { user: "alice" });
    expectError(wrongMethod, 405, "method_not_allowed");
    expect(wrongMethod.headers.get("allow")).toBe("POST");
    expectError(await call(t, "DELETE", "/ns/admin/writer", { adminKey: KEY }), 405);
  });

  it("refuses bodies that are not JSON, too large, or of the wrong shape", async () => {
    const ns = freshNamespace();
    const t = target();
    const client = new NativeClient(t, ns, "alice");
    await client.push([{ name: "createTodo", args: { id: "t1" } }]);
    const before = (await admin(t, ns, "status", KEY)).json.engine;
    const pull = `/${ns}/pull`;
    const push = `/${ns}/push`;
    const json = { "content-type": "application/json" };
    expectError(
      await call(t, "POST", pull, {
        user: "alice",
        rawBody: "{}",
        headers: { "content-type": "text/plain" },
      }),
      415,
      "unsupported_media_type",
    );
    expectError(
      await call(t, "POST", pull, { user: "alice", rawBody: "{", headers: json }),
      400,
      "bad_request",
    );
    expectError(await call(t, "POST", pull, { user: "alice", headers: json }), 400);
    expectError(
      await call(t, "POST", pull, { user: "alice", rawBody: new Uint8Array([0xff, 0xfe]), headers: json }),
      400,
    );
    expectError(
      await call(t, "POST", push, { user: "alice", rawBody: `[${"1,".repeat(200_000)}1]`, headers: json }),
      413,
      "payload_too_large",
    );
    const cases: unknown[] = [
      null,
      [],
      "pull",
      { clientGroupID: "g", clientID: "c" },
      { clientGroupID: "g", clientID: "c", cookie: -1 },
      { clientGroupID: "g", clientID: "c", cookie: 1.5 },
      { clientGroupID: "", clientID: "c", cookie: null },
      { clientGroupID: "g", clientID: "c", cookie: null, extra: true },
    ];
    for (const body of cases) expectError(await call(t, "POST", pull, { user: "alice", body }), 400);
    const mutation = {
      type: "custom",
      id: 2,
      clientID: client.clientID,
      name: "createTodo",
      args: [{ id: "x" }],
    };
    const pushes: unknown[] = [
      {},
      { clientGroupID: client.clientGroupID, pushVersion: 1, mutations: [{ ...mutation, id: -1 }] },
      { clientGroupID: client.clientGroupID, pushVersion: 1, mutations: [{ ...mutation, id: 2.5 }] },
      { clientGroupID: client.clientGroupID, pushVersion: 1, mutations: [{ ...mutation, id: 2 ** 60 }] },
      { clientGroupID: client.clientGroupID, pushVersion: 1, mutations: [{ ...mutation, args: "x" }] },
      { clientGroupID: client.clientGroupID, pushVersion: 1, mutations: [{ ...mutation, name: "" }] },
      { clientGroupID: client.clientGroupID, pushVersion: 1, mutations: {} },
    ];
    for (const body of pushes) expectError(await call(t, "POST", push, { user: "alice", body }), 400);
    expectError(await admin(t, ns, "writer", KEY, { enabled: "no" }), 400);
    expectError(await admin(t, ns, "invalidate", KEY, { now: true }), 400);
    const after = (await admin(t, ns, "status", KEY)).json.engine;
    expect(after).toEqual(before);
    await client.sync();
    expect(client.rows.size).toBe(1);
  });
}
