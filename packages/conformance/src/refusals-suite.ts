import { expect, it } from "vitest";
import { CONFORMANCE_ADMIN_KEY as KEY } from "./conformance-config.js";
import { admin, call, freshNamespace, NativeClient } from "./http-client.js";
import type { ConformanceTarget } from "./target.js";

/** How every host refuses: the same shapes and codes, a request id on every 5xx. */
export function refusalsSuite(target: () => ConformanceTarget): void {
  it("answers a 5xx with a request id, in the body and the x-request-id header", async () => {
    const t = target();
    const client = new NativeClient(t, freshNamespace(), "alice");
    expect((await admin(t, client.ns, "writer", KEY, { enabled: false })).status).toBe(200);
    const refused = await client.push([{ name: "createTodo", args: { id: "t1" } }]);
    expect(refused.status).toBe(503);
    expect(refused.json).toMatchObject({ error: "writer_disabled", message: expect.any(String) });
    expect(refused.json.requestId).toEqual(expect.any(String));
    expect(refused.headers.get("x-request-id")).toBe(refused.json.requestId);
    await admin(t, client.ns, "writer", KEY, { enabled: true });
    await admin(t, client.ns, "fault", KEY, { point: "pull_during_tx", kind: "error" });
    const faulted = await client.pull();
    expect(faulted.status).toBe(500);
    expect(faulted.headers.get("x-request-id")).toBe(faulted.json.requestId);
    // A refusal of the request itself (4xx) needs none.
    const bad = await call(t, "POST", `/${client.ns}/pull`, { user: "alice", body: {} });
    expect(bad.status).toBe(400);
    expect(bad.json.requestId).toBeUndefined();
  });

  it("refuses an oversized body with the same 413 on every host, and nothing changes", async () => {
    const t = target();
    const client = new NativeClient(t, freshNamespace(), "alice");
    await client.push([{ name: "createTodo", args: { id: "kept" } }]);
    const padding = " ".repeat(300 * 1024);
    for (const route of ["pull", "push"]) {
      const answer = await call(t, "POST", `/${client.ns}/${route}`, {
        user: "alice",
        rawBody: `{${padding}}`,
        headers: { "content-type": "application/json" },
      });
      expect(answer.status).toBe(413);
      expect(answer.json).toEqual({
        error: "payload_too_large",
        message: "the body is larger than 262144 bytes",
      });
    }
    await client.sync();
    expect([...client.rows.values()].map((row) => row.id)).toEqual(["kept"]);
  });
}
