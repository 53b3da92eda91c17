import { readdirSync } from "node:fs";
import type { Miniflare } from "miniflare";
import { afterAll, beforeAll, expect, it } from "vitest";
import { bundleWorker, startWorker } from "../test/start-worker.js";

let outdir = "";
let mf: Miniflare | undefined;
let url = "";

beforeAll(async () => {
  const bundle = bundleWorker();
  outdir = bundle.outdir;
  const total = Object.values(bundle.sizes).reduce((sum, size) => sum + size, 0);
  console.log(`wrangler bundle: ${(total / 1024).toFixed(1)} KiB`, bundle.sizes);
  ({ mf, url } = await startWorker(outdir, { bindings: { ADMIN_KEY: "example-admin-key" } }));
});

afterAll(() => mf?.dispose());

async function post(path: string, user: string, body: unknown) {
  const response = await fetch(`${url}${path}`, {
    method: "POST",
    headers: { authorization: user, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, json: await response.json() };
}

it("bundles with wrangler into a Worker and the engine's .wasm module", () => {
  const files = readdirSync(outdir);
  expect(files).toContain("worker.js");
  expect(files.some((file) => file.endsWith(".wasm"))).toBe(true);
});

it("serves the todo app from the wrangler bundle in workerd: each user sees their own todos", async () => {
  const create = (user: string, id: string) =>
    post("/todo/push", user, {
      clientGroupID: `g-${user}`,
      pushVersion: 1,
      mutations: [
        {
          type: "custom",
          id: 1,
          clientID: `c-${user}`,
          name: "createTodo",
          args: [{ id, text: `${user}'s todo`, done: false, sort: 1 }],
          timestamp: 1,
        },
      ],
    });
  expect((await create("alice", "a1")).json.pushResponse.mutations[0].result).toEqual({});
  expect((await create("bob", "b1")).status).toBe(200);
  const pulled = await post("/todo/pull", "alice", {
    clientGroupID: "g-alice",
    clientID: "c-alice",
    cookie: null,
  });
  const puts = pulled.json.rowsPatch.filter((op: { op: string }) => op.op === "put");
  expect(puts.map((op: { value: unknown }) => op.value)).toEqual([
    { id: "a1", owner: "alice", text: "alice's todo", done: false, sort: 1 },
  ]);
  const refused = await post("/todo/push", "alice", {
    clientGroupID: "g-alice",
    pushVersion: 1,
    mutations: [
      { type: "custom", id: 2, clientID: "c-alice", name: "updateTodo", args: [{ id: "b1", done: true }] },
    ],
  });
  expect(refused.json.pushResponse.mutations[0].result).toMatchObject({ error: "app" });
  const status = await fetch(`${url}/todo/admin/status`, { headers: { "x-admin-key": "example-admin-key" } });
  expect(status.status).toBe(200);
});
