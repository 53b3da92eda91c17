import { describe, expect, it } from "vitest";
import { schema, tempFile } from "../../test/fixtures.js";
import { sqliteUpstream } from "../sqlite-upstream.js";
import { applyMutations, createMutateServer, type SqliteMutator } from "./sqlite-mutate.js";

const mutators: Record<string, SqliteMutator> = {
  addTodo(db, args) {
    const { id } = args as { id: string };
    db.prepare("INSERT INTO todo (id, owner, done, sort) VALUES (?, 'u', 0, 0)").run(id);
  },
  addThenRefuse(db, args) {
    const { id } = args as { id: string };
    db.prepare("INSERT INTO todo (id, owner, done, sort) VALUES (?, 'u', 0, 0)").run(id);
    throw new Error("refused on purpose");
  },
};

const push = (...mutations: Array<{ id: number; name: string; args: unknown }>) => ({
  clientGroupID: "g",
  pushVersion: 1 as const,
  mutations: mutations.map((m) => ({
    type: "custom" as const,
    clientID: "c",
    id: m.id,
    name: m.name,
    args: [m.args],
  })),
});

describe("applyMutations", () => {
  it("applies each mutation once, rolls back a refused one's writes and still records its id", async () => {
    const upstream = sqliteUpstream({ file: tempFile(), schema });
    const context = { namespace: "ns", authorization: null };
    const first = await applyMutations(
      upstream,
      mutators,
      push(
        { id: 1, name: "addTodo", args: { id: "a" } },
        { id: 2, name: "addThenRefuse", args: { id: "b" } },
      ),
      context,
    );
    if (!("mutations" in first)) throw new Error("refused");
    expect(first.mutations).toEqual([
      { id: { clientID: "c", id: 1 }, result: {} },
      { id: { clientID: "c", id: 2 }, result: { error: "app", message: "refused on purpose" } },
    ]);
    expect(first.watermark).toBe(1n);
    // Sent again (a retry after a lost answer), with the next one: only the next one applies.
    const again = await applyMutations(
      upstream,
      mutators,
      push({ id: 1, name: "addTodo", args: { id: "a" } }, { id: 3, name: "addTodo", args: { id: "c" } }),
      context,
    );
    if (!("mutations" in again)) throw new Error("refused");
    expect(again.mutations.map((m) => m.result)).toEqual([{}, {}]);
    const ids = upstream.db.prepare("SELECT id FROM todo ORDER BY id").pluck().all();
    expect(ids).toEqual(["a", "c"]);
    expect((await upstream.changes(0n, 100)).changes.map((c) => c.rowData?.id)).toEqual(["a", "c"]);
    upstream.close();
  });

  it("serves POST /mutate, refusing bad bodies and unknown namespaces", async () => {
    const upstream = sqliteUpstream({ file: tempFile(), schema });
    const server = createMutateServer({
      upstream: (namespace) => (namespace === "ns" ? upstream : null),
      mutators,
      authorize: (authorization) => authorization === "alice",
    });
    const { url } = await server.listen();
    const call = (body: unknown, headers: Record<string, string> = {}) =>
      fetch(url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "x-weir-namespace": "ns",
          authorization: "alice",
          ...headers,
        },
        body: JSON.stringify(body),
      });
    const ok = await call(push({ id: 1, name: "addTodo", args: { id: "a" } }));
    expect(await ok.json()).toEqual({
      mutations: [{ id: { clientID: "c", id: 1 }, result: {} }],
      watermark: 1,
    });
    expect((await call({ nope: 1 })).status).toBe(400);
    expect((await call(push(), { "x-weir-namespace": "other" })).status).toBe(404);
    expect((await call(push(), { authorization: "bob" })).status).toBe(403);
    await server.close();
    upstream.close();
  });

  it("refuses a mutation beyond the next one with PushFailed oooMutation, applying none of the rest", async () => {
    const upstream = sqliteUpstream({ file: tempFile(), schema });
    const context = { namespace: "ns", authorization: null };
    await applyMutations(upstream, mutators, push({ id: 1, name: "addTodo", args: { id: "a" } }), context);
    // The app's file was restored to before mutation 2, which weir holds: 3 and 4 come next.
    const answer = await applyMutations(
      upstream,
      mutators,
      push({ id: 3, name: "addTodo", args: { id: "c" } }, { id: 4, name: "addTodo", args: { id: "d" } }),
      context,
    );
    expect(answer).toEqual({
      pushResponse: {
        kind: "PushFailed",
        origin: "server",
        reason: "oooMutation",
        message: "mutation 3 of client c is not the next one this app expects",
        mutationIDs: [
          { clientID: "c", id: 3 },
          { clientID: "c", id: 4 },
        ],
      },
    });
    expect(upstream.db.prepare("SELECT id FROM todo ORDER BY id").pluck().all()).toEqual(["a"]);
    upstream.close();
  });

  it("refuses a body past maxBodyBytes with 413, counted in bytes, and runs none of it", async () => {
    const upstream = sqliteUpstream({ file: tempFile(), schema });
    const server = createMutateServer({ upstream: () => upstream, mutators, maxBodyBytes: 1024 });
    const { url } = await server.listen();
    // 400 characters of four bytes each: under the limit in characters, over it in bytes.
    const body = JSON.stringify(push({ id: 1, name: "addTodo", args: { id: "\u{1F600}".repeat(400) } }));
    expect(body.length).toBeLessThan(1024);
    const answer = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", "x-weir-namespace": "ns" },
      body,
    });
    expect(answer.status).toBe(413);
    expect(await answer.json()).toMatchObject({ error: "payload_too_large" });
    expect(upstream.db.prepare("SELECT id FROM todo").pluck().all()).toEqual([]);
    // A mutator name the mutators object only inherits is no mutator.
    const inherited = await applyMutations(
      upstream,
      mutators,
      push({ id: 1, name: "constructor", args: {} }),
      { namespace: "ns", authorization: null },
    );
    expect(inherited).toMatchObject({
      mutations: [{ result: { error: "app", message: "no mutator constructor" } }],
    });
    await server.close();
    upstream.close();
  });
});
