import { expect, it } from "vitest";
import { CONFORMANCE_MAX_CHANGE_ROWS } from "./conformance-config.js";
import { call, freshNamespace, NativeClient } from "./http-client.js";
import type { SuiteApp } from "./suite-app.js";
import type { ConformanceTarget } from "./target.js";

/** The todo ids a client holds, sorted. */
function todoIDs(client: NativeClient): string[] {
  return [...client.rows.values()].map((row) => String(row.id)).sort();
}

/**
 * Pulls until caught up, checking at every page that no mutation of the client shows as
 * acknowledged before the rows it wrote (`rowsOf(id)`) arrived.
 */
async function syncCheckingEffects(client: NativeClient, rowsOf: (id: number) => string[]) {
  const broken: number[] = [];
  for (let page = 0; page < 1000; page++) {
    const answer = await client.pull();
    expect(answer.status).toBe(200);
    client.apply(answer.json);
    const held = new Set(todoIDs(client));
    for (let id = 1; id <= client.lastMutationID; id++) {
      if (!rowsOf(id).every((row) => held.has(row))) broken.push(id);
    }
    if (answer.json.unchanged) return { broken, pages: page + 1 };
  }
  throw new Error("pull never caught up");
}

/**
 * Namespaces named `dp-*` delegate their pushes to the app's own server (the suite's app, whose
 * mutators write the suite upstream's database) and replicate that upstream. A mutation is
 * acknowledged only once its effects came back through ingest; whatever goes wrong with the app,
 * nothing is acknowledged that the app did not apply.
 */
export function delegatedPushSuite(target: () => ConformanceTarget, app: () => SuiteApp): void {
  /** A fresh delegated namespace with alice synced to its first (empty) state. */
  async function namespace() {
    const t = target();
    const ns = freshNamespace("dp-");
    const alice = new NativeClient(t, ns, "alice");
    await alice.sync();
    return { t, ns, alice, calls: () => app().calls.filter((c) => c.namespace === ns) };
  }

  it("forwards a push with the caller's auth and acknowledges it only with its effects, in every capped pull", async () => {
    const { ns, alice, calls } = await namespace();
    const first = await alice.push([
      { name: "createTodo", args: { id: "one" } },
      { name: "bulkCreate", args: { prefix: "b2", count: 30 } },
    ]);
    expect(first.status).toBe(200);
    expect(first.json.pushResponse.mutations).toEqual([
      { id: { clientID: alice.clientID, id: 1 }, result: {} },
      { id: { clientID: alice.clientID, id: 2 }, result: {} },
    ]);
    expect(calls()).toEqual([{ namespace: ns, authorization: "alice", mutationIDs: [1, 2] }]);
    // Two pushes more: their rows and their acknowledgements make more versions than a pull
    // (capped at CONFORMANCE_MAX_CHANGE_ROWS rows) carries.
    for (const id of [3, 4]) {
      const answer = await alice.push([{ name: "bulkCreate", args: { prefix: `b${id}`, count: 30 } }]);
      expect(answer.status).toBe(200);
    }
    expect(CONFORMANCE_MAX_CHANGE_ROWS).toBeLessThan(91);
    const rowsOf = (id: number) => (id === 1 ? ["one"] : Array.from({ length: 30 }, (_, i) => `b${id}-${i}`));
    const { broken, pages } = await syncCheckingEffects(alice, rowsOf);
    expect(broken).toEqual([]);
    expect(pages).toBeGreaterThanOrEqual(3);
    expect(alice.lastMutationID).toBe(4);
    expect(todoIDs(alice)).toEqual([1, 2, 3, 4].flatMap(rowsOf).sort());
    // The app's rows follow visibility like any other.
    const bob = new NativeClient(target(), ns, "bob");
    await bob.sync();
    expect(todoIDs(bob)).toEqual([]);
  });

  it("never forwards a replay: it answers it as already processed", async () => {
    const { alice, calls } = await namespace();
    await alice.push([{ name: "createTodo", args: { id: "r" }, id: 1 }]);
    const again = await alice.push([{ name: "createTodo", args: { id: "r" }, id: 1 }]);
    expect(again.status).toBe(200);
    expect(again.json.pushResponse.mutations[0].result.error).toBe("alreadyProcessed");
    expect(calls()).toHaveLength(1);
  });

  it("keeps the app's refusal to its mutation: the id advances and the client hears why", async () => {
    const { alice } = await namespace();
    const answer = await alice.push([
      { name: "refuse", args: {} },
      { name: "createTodo", args: { id: "after" } },
    ]);
    expect(answer.json.pushResponse.mutations.map((m: { result: unknown }) => m.result)).toEqual([
      { error: "app", message: "refused by the app" },
      {},
    ]);
    await alice.sync();
    expect(alice.lastMutationID).toBe(2);
    expect(todoIDs(alice)).toEqual(["after"]);
  });

  it("answers 503 app_unavailable when the app cannot be reached, acknowledging nothing; a later push goes through once", async () => {
    const { alice, calls } = await namespace();
    app().misbehave.push({ kind: "down" }, { kind: "down" }, { kind: "down" });
    const down = await alice.push([{ name: "createTodo", args: { id: "d" }, id: 1 }]);
    expect(down.status).toBe(503);
    expect(down.json.error).toBe("app_unavailable");
    expect(calls()).toHaveLength(3);
    await alice.sync();
    expect(alice.lastMutationID).toBe(0);
    expect(todoIDs(alice)).toEqual([]);
    const again = await alice.push([{ name: "createTodo", args: { id: "d" }, id: 1 }]);
    expect(again.status).toBe(200);
    await alice.sync();
    expect(alice.lastMutationID).toBe(1);
    expect(todoIDs(alice)).toEqual(["d"]);
  });

  it("tries again after a 503, waiting as its Retry-After asks", async () => {
    const { alice, calls } = await namespace();
    app().misbehave.push({
      kind: "answer",
      status: 503,
      body: { error: "busy", message: "later" },
      headers: { "retry-after": "1" },
    });
    const started = Date.now();
    const answer = await alice.push([{ name: "createTodo", args: { id: "w" } }]);
    expect(answer.status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(calls()).toHaveLength(2);
  });

  it("passes the app's PushFailed and 4xx answers through unchanged, recording nothing", async () => {
    const { alice } = await namespace();
    const failed = {
      pushResponse: {
        kind: "PushFailed",
        origin: "server",
        reason: "database",
        message: "the app's database is read-only",
        mutationIDs: [{ clientID: alice.clientID, id: 1 }],
      },
    };
    app().misbehave.push({ kind: "answer", status: 200, body: failed });
    const first = await alice.push([{ name: "createTodo", args: { id: "f" }, id: 1 }]);
    expect(first.status).toBe(200);
    expect(first.json).toEqual(failed);
    app().misbehave.push({ kind: "answer", status: 403, body: { error: "forbidden", message: "not yours" } });
    const second = await alice.push([{ name: "createTodo", args: { id: "f" }, id: 1 }]);
    expect(second.status).toBe(403);
    expect(second.json).toEqual({ error: "forbidden", message: "not yours" });
    await alice.sync();
    expect(alice.lastMutationID).toBe(0);
  });

  it("passes the app's oooMutation refusal through when the app lost mutations weir holds, recording nothing", async () => {
    const { alice, calls } = await namespace();
    expect((await alice.push([{ name: "createTodo", args: { id: "kept" }, id: 1 }])).status).toBe(200);
    // The app's database was restored to before mutation 1: mutation 2 is beyond what it expects.
    app().misbehave.push({ kind: "forgetClients" });
    const answer = await alice.push([{ name: "createTodo", args: { id: "lost" }, id: 2 }]);
    expect(answer.status).toBe(200);
    expect(answer.json.pushResponse).toMatchObject({
      kind: "PushFailed",
      reason: "oooMutation",
      mutationIDs: [{ clientID: alice.clientID, id: 2 }],
    });
    // Refused once, not retried as a failure of the app.
    expect(calls()).toHaveLength(2);
    await alice.sync();
    expect(alice.lastMutationID).toBe(1);
    expect(todoIDs(alice)).toEqual(["kept"]);
  });

  it("refuses an answer that leaves a mutation unacknowledged; the push sent again applies it once", async () => {
    const { t, ns, alice } = await namespace();
    app().misbehave.push({ kind: "dropAck" });
    const mutations = [
      { name: "createTodo", args: { id: "a1" }, id: 1 },
      { name: "createTodo", args: { id: "a2" }, id: 2 },
    ];
    const answer = await alice.push(mutations);
    expect(answer.status).toBe(502);
    expect(answer.json.error).toBe("mutate_failed");
    const before = await alice.pull();
    expect(before.json.lastMutationIDChanges?.[alice.clientID]).toBeUndefined();
    // The app applied both already; it knows, and acknowledges without applying them again.
    const again = await alice.push(mutations);
    expect(again.status).toBe(200);
    expect(again.json.pushResponse.mutations.map((m: { result: unknown }) => m.result)).toEqual([{}, {}]);
    const fresh = new NativeClient(t, ns, "alice", alice.clientGroupID, alice.clientID);
    await fresh.sync();
    expect(fresh.lastMutationID).toBe(2);
    expect(todoIDs(fresh)).toEqual(["a1", "a2"]);
  });

  it("acknowledges through the replicache dialect too, after the effects", async () => {
    const { t, ns, alice, calls } = await namespace();
    const pushed = await call(t, "POST", `/${ns}/replicache/push`, {
      user: "alice",
      body: {
        pushVersion: 1,
        clientGroupID: alice.clientGroupID,
        profileID: "p",
        schemaVersion: "",
        mutations: [
          { clientID: alice.clientID, id: 1, name: "createTodo", args: { id: "rc" }, timestamp: 1 },
        ],
      },
    });
    expect(pushed.status).toBe(200);
    expect(calls()).toHaveLength(1);
    await alice.sync();
    expect(alice.lastMutationID).toBe(1);
    expect(todoIDs(alice)).toEqual(["rc"]);
  });
}
