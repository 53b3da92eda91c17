import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN, push, send } from "../test/client.js";
import { startWorkerd, type Workerd } from "../test/workerd.js";

let w: Workerd;
beforeAll(async () => {
  w = await startWorkerd();
});
afterAll(async () => {
  if (process.env.SHOW) console.log(w.output.text);
  await w.dispose();
});

const firstTodos = { op: "put", hash: "h1", name: "firstTodos", args: { limit: 10 } };

const pull = (ns: string, queries?: { patch: unknown[] }) =>
  send(w.url, `/${ns}/pull`, {
    user: "alice",
    body: { clientGroupID: "g-alice", clientID: "c-alice", cookie: null, ...(queries ? { queries } : {}) },
  });

describe("the engine an object loads in workerd", () => {
  it("is the full one for a config that names queries", async () => {
    const health = await send(w.url, "/named/admin/health", { headers: ADMIN });
    expect(health.json).toMatchObject({ ok: true, queryEngine: true });
    expect((await push(w.url, "named", "alice", 1, { id: "t1", text: "one" })).status).toBe(200);
    const answer = await pull("named", { patch: [firstTodos] });
    expect(answer.status).toBe(200);
    expect(answer.json.gotQueries).toEqual(["h1"]);
  });

  it("is the lean one for a config without, which answers pulls and pushes alike", async () => {
    const health = await send(w.url, "/plain/p1/admin/health", { headers: ADMIN });
    expect(health.json).toMatchObject({ ok: true, queryEngine: false });
    expect((await push(w.url, "plain/p1", "alice", 1, { id: "t1", text: "one" })).status).toBe(200);
    const answer = await pull("plain/p1");
    expect(answer.status).toBe(200);
    expect(answer.json.lastMutationIDChanges).toEqual({ "c-alice": 1 });
    expect(answer.json.rowsPatch.map((op: { op: string }) => op.op)).toEqual(["clear", "put"]);
    // A pull that carries queries gets the engine's clear refusal, not a failure.
    const refused = await pull("plain/p1", { patch: [] });
    expect(refused.status).toBe(503);
    expect(refused.json.error).toBe("queries_disabled");
  });

  it("from the lean entry, refuses to start for a config that names queries", async () => {
    const answer = await send(w.url, "/lean-queries/l1/admin/health", { headers: ADMIN });
    expect(answer.status).toBe(500);
    expect(w.output.text).toContain("which @weir/edge-host/lean cannot answer");
  });
});
