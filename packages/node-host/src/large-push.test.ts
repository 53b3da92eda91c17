import { CONFORMANCE_ADMIN_KEY } from "@weir/conformance";
import { MAX_MUTATIONS_PER_PUSH } from "@weir/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ChildServer, startChildServer } from "../test/child-server.js";
import { tempDir } from "../test/helpers.js";

const MB = 1_000_000;
/** What one push of the largest batch may add to the server's peak resident memory. */
const PEAK_GROWTH_LIMIT = 100 * MB;

interface Memory {
  engineBytes: number;
  maxRssBytes: number;
}

describe("a push of the largest batch the protocol allows", () => {
  let server: ChildServer;
  beforeAll(async () => {
    server = await startChildServer(tempDir(), "todo-server.mjs");
  });
  afterAll(async () => {
    server.child.kill("SIGTERM");
    await server.exited;
  });

  const post = async (path: string, body: unknown, user = "alice") => {
    const response = await fetch(`${server.url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: user },
      body: JSON.stringify(body),
    });
    return { status: response.status, json: (await response.json()) as Record<string, unknown> };
  };
  const memory = async (ns: string): Promise<Memory> => {
    const response = await fetch(`${server.url}/${ns}/admin/status`, {
      headers: { "x-admin-key": CONFORMANCE_ADMIN_KEY },
    });
    return ((await response.json()) as { memory: Memory }).memory;
  };
  /** The server's peak memory before a push, once a small push and pull have warmed it. */
  const warmedPeak = async (ns: string) => {
    await post(`/${ns}/push`, nativePush("warm", 1));
    await post(`/${ns}/pull`, { clientGroupID: "g-warm", clientID: "warm", cookie: null });
    return (await memory(ns)).maxRssBytes;
  };

  it("succeeds natively with bounded memory, and other namespaces keep answering", async () => {
    const before = await warmedPeak("big-native");
    const answer = await post("/big-native/push", nativePush("c", MAX_MUTATIONS_PER_PUSH));
    expect(answer.status).toBe(200);
    const results = (answer.json.pushResponse as { mutations: Array<{ result: unknown }> }).mutations;
    expect(results).toHaveLength(MAX_MUTATIONS_PER_PUSH);
    expect(results.every((entry) => JSON.stringify(entry.result) === "{}")).toBe(true);
    const after = await memory("big-native");
    expect(after.maxRssBytes - before).toBeLessThan(PEAK_GROWTH_LIMIT);
    expect(after.engineBytes).toBeLessThan(32 * 1024 * 1024);

    const other = await post("/big-other/pull", { clientGroupID: "g2", clientID: "c2", cookie: null });
    expect(other.status).toBe(200);
    const pulled = await post("/big-native/pull", { clientGroupID: "g-c", clientID: "c", cookie: null });
    expect(pulled.status).toBe(200);
    expect(pulled.json.lastMutationIDChanges).toEqual({ c: MAX_MUTATIONS_PER_PUSH });
    expect((pulled.json.rowsPatch as unknown[]).length).toBe(MAX_MUTATIONS_PER_PUSH + 2);
  });

  it("succeeds from a Replicache client with bounded memory", async () => {
    const before = await warmedPeak("big-replicache");
    const mutations = Array.from({ length: MAX_MUTATIONS_PER_PUSH }, (_, i) => ({
      clientID: "rc",
      id: i + 1,
      name: "createTodo",
      args: { id: `r${i}`, text: "queued offline" },
      timestamp: i,
    }));
    const body = { pushVersion: 1, clientGroupID: "rg", profileID: "p", schemaVersion: "1", mutations };
    const answer = await post("/big-replicache/replicache/push", body);
    expect(answer).toEqual({ status: 200, json: {} });
    expect((await memory("big-replicache")).maxRssBytes - before).toBeLessThan(PEAK_GROWTH_LIMIT);
    const pulled = await post("/big-replicache/replicache/pull", {
      pullVersion: 1,
      clientGroupID: "rg",
      cookie: null,
      profileID: "p",
      schemaVersion: "1",
    });
    expect(pulled.json.lastMutationIDChanges).toEqual({ rc: MAX_MUTATIONS_PER_PUSH });
  });

  it("commits it in slices, answering other requests between them", async () => {
    // The namespace exists (one mutation of another client) before the large push begins.
    await post("/big-sliced/push", nativePush("warm", 1));
    const mutations = async () => {
      const response = await fetch(`${server.url}/big-sliced/admin/status`, {
        headers: { "x-admin-key": CONFORMANCE_ADMIN_KEY },
      });
      return ((await response.json()) as { counters: { mutations: number } }).counters.mutations;
    };
    let answered = false;
    const pushing = post("/big-sliced/push", nativePush("s", MAX_MUTATIONS_PER_PUSH)).finally(() => {
      answered = true;
    });
    // While the push is out: the mutations its namespace counts, and another namespace's pulls.
    const counted: number[] = [];
    const otherPulls: number[] = [];
    while (!answered) {
      counted.push(await mutations());
      otherPulls.push(
        (await post("/big-bystander/pull", { clientGroupID: "b", clientID: "b", cookie: null })).status,
      );
    }
    expect((await pushing).status).toBe(200);
    // Some of the push's slices were committed, not all, when the namespace answered a request.
    expect(counted.some((n) => n > 1 && n < 1 + MAX_MUTATIONS_PER_PUSH)).toBe(true);
    expect(otherPulls.length).toBeGreaterThan(0);
    expect(otherPulls.every((status) => status === 200)).toBe(true);
    expect(await mutations()).toBe(1 + MAX_MUTATIONS_PER_PUSH);
  });

  it("refuses a larger batch up front with 413 and stores nothing", async () => {
    const answer = await post("/big-refused/push", nativePush("c", MAX_MUTATIONS_PER_PUSH + 1));
    expect(answer.status).toBe(413);
    expect(answer.json).toMatchObject({ error: "payload_too_large" });
    expect(String(answer.json.message)).toContain(String(MAX_MUTATIONS_PER_PUSH));
    const pulled = await post("/big-refused/pull", { clientGroupID: "g", clientID: "c", cookie: null });
    expect(pulled.json).toMatchObject({ lastMutationIDChanges: {}, rowsPatch: [{ op: "clear" }] });
  });
});

function nativePush(clientID: string, count: number) {
  return {
    clientGroupID: `g-${clientID}`,
    pushVersion: 1,
    mutations: Array.from({ length: count }, (_, i) => ({
      type: "custom",
      id: i + 1,
      clientID,
      name: "createTodo",
      args: [{ id: `${clientID}-${i}`, text: "queued offline" }],
    })),
  };
}
