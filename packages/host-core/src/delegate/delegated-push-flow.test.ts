import { describe, expect, it } from "vitest";
import { ScriptedUpstream } from "../../test/scripted-upstream.js";
import { headerUser, memoryStorage, memoryStore, send, testHost } from "../../test/test-host.js";
import { resolveConfig } from "../config/resolve-config.js";
import type { WeirConfig } from "../config/weir-config.js";
import type { MutateConfig } from "./mutate-config.js";

interface AppCall {
  authorization: string | null;
  namespace: string | null;
  body: {
    clientGroupID: string;
    mutations: Array<{ clientID: string; id: number; name: string; args: unknown[] }>;
  };
}

/**
 * The app's own server, in process: `setItem` writes rows to the upstream (its system of record)
 * and each answer acknowledges every mutation with the watermark it reached, unless a test
 * scripts another answer.
 */
class App {
  readonly calls: AppCall[] = [];
  readonly answers: Array<(call: AppCall) => Response | Promise<Response>> = [];
  /** How many mutations each client applied: a retried push applies none twice. */
  readonly lastIDs = new Map<string, number>();
  constructor(readonly upstream: ScriptedUpstream) {}

  readonly fetch = async (_url: string, init: RequestInit): Promise<Response> => {
    const headers = new Headers(init.headers);
    const call: AppCall = {
      authorization: headers.get("authorization"),
      namespace: headers.get("x-weir-namespace"),
      body: JSON.parse(String(init.body)),
    };
    this.calls.push(call);
    const scripted = this.answers.shift();
    const answer = Promise.resolve(scripted ? scripted(call) : this.apply(call));
    // As fetch does: the caller's signal aborts the call.
    const signal = init.signal!;
    return Promise.race([
      answer,
      new Promise<never>((_resolve, reject) => {
        signal.addEventListener("abort", () => reject(signal.reason), { once: true });
      }),
    ]);
  };

  apply(call: AppCall): Response {
    const mutations = [];
    for (const m of call.body.mutations) {
      const last = this.lastIDs.get(m.clientID) ?? 0;
      if (m.id <= last) {
        mutations.push({ id: { clientID: m.clientID, id: m.id }, result: {} });
        continue;
      }
      this.lastIDs.set(m.clientID, m.id);
      const args = m.args[0] as { ids?: string[]; n?: number; refuse?: boolean };
      if (args.refuse) {
        mutations.push({ id: { clientID: m.clientID, id: m.id }, result: { error: "app", message: "no" } });
        continue;
      }
      this.upstream.commit((args.ids ?? []).map((id) => ({ id, n: args.n ?? 0 })));
      mutations.push({ id: { clientID: m.clientID, id: m.id }, result: {} });
    }
    return Response.json({ mutations, watermark: this.upstream.watermark });
  }
}

function config(upstream: ScriptedUpstream, app: App, mutate: Partial<MutateConfig> = {}): WeirConfig {
  return {
    schema: { tables: { item: { columns: { id: "string", n: "integer" }, primaryKey: ["id"] } } },
    mutators: {},
    authenticate: headerUser,
    maxChangeRows: 1,
    upstream: { source: upstream, freshnessMs: 60_000 },
    mutate: { url: "http://app.test/mutate", fetch: app.fetch, ...mutate },
  };
}

async function setup(mutate: Partial<MutateConfig> = {}) {
  const upstream = new ScriptedUpstream();
  const app = new App(upstream);
  const store = { ...memoryStore(), close: () => {} };
  const host = await testHost(config(upstream, app, mutate), { storage: memoryStorage(() => store) });
  let nextID = 1;
  const push = (args: unknown, id = nextID++) =>
    send(host, "POST", "/ns/push", {
      user: "alice",
      body: {
        clientGroupID: "g",
        pushVersion: 1,
        mutations: [{ type: "custom", clientID: "c", id, name: "setItem", args: [args] }],
      },
    });
  let cookie: unknown = null;
  const pull = async () => {
    const answer = await send(host, "POST", "/ns/pull", {
      user: "alice",
      body: { clientGroupID: "g", clientID: "c", cookie },
    });
    cookie = answer.json.cookie;
    return answer.json;
  };
  /** Pulls until caught up: the rows seen, and whether the client's id was acknowledged before its rows. */
  const sync = async () => {
    const rows = new Set<string>();
    let acked = 0;
    const ackedBeforeRows: number[] = [];
    for (;;) {
      const page = await pull();
      if (page.unchanged) return { rows, acked, ackedBeforeRows };
      for (const op of page.rowsPatch) if (op.op === "put") rows.add(op.value.id);
      const last = page.lastMutationIDChanges?.c;
      if (last !== undefined) {
        acked = last;
        ackedBefore(last, rows, ackedBeforeRows);
      }
    }
  };
  // The first pull takes the first snapshot (of an empty upstream).
  await pull();
  return { upstream, app, host, push, sync, nextMutationID: (id: number) => (nextID = id) };
}

/** A mutation `id` acknowledged while its rows (`r<id>-*`) are missing is a broken promise. */
function ackedBefore(last: number, rows: Set<string>, broken: number[]): void {
  for (let id = 1; id <= last; id++) {
    if (![...rows].some((row) => row.startsWith(`r${id}-`))) broken.push(id);
  }
}

describe("a delegated push", () => {
  it("forwards the mutations to the app with the caller's auth, and acknowledges them only with their effects", async () => {
    const { app, push, sync } = await setup();
    const answer = await push({ ids: ["r1-a", "r1-b", "r1-c"], n: 1 });
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual({
      pushResponse: { mutations: [{ id: { clientID: "c", id: 1 }, result: {} }] },
    });
    expect(app.calls).toHaveLength(1);
    expect(app.calls[0]).toMatchObject({
      authorization: "alice",
      namespace: "ns",
      body: { clientGroupID: "g", mutations: [{ clientID: "c", id: 1, name: "setItem" }] },
    });
    await push({ ids: ["r2-a", "r2-b"], n: 2 });
    // Pull caps of one row: every page takes one version, and the ids come after the rows.
    const seen = await sync();
    expect(seen.acked).toBe(2);
    expect(seen.ackedBeforeRows).toEqual([]);
    expect([...seen.rows].sort()).toEqual(["r1-a", "r1-b", "r1-c", "r2-a", "r2-b"]);
  });

  it("never forwards a replay, and answers it as already processed", async () => {
    const { app, push } = await setup();
    await push({ ids: ["r1-a"] }, 1);
    const again = await push({ ids: ["r1-a"] }, 1);
    expect(again.json.pushResponse.mutations[0].result.error).toBe("alreadyProcessed");
    expect(app.calls).toHaveLength(1);
  });

  it("keeps an application error to its mutation: the id advances, the client hears why", async () => {
    const { push, sync } = await setup();
    const refused = await push({ refuse: true });
    expect(refused.json.pushResponse.mutations[0].result).toEqual({ error: "app", message: "no" });
    expect((await sync()).acked).toBe(1);
  });

  it("answers 503 when the app cannot be reached, after three attempts, and acknowledges nothing", async () => {
    const { app, push, sync } = await setup();
    const down = () => {
      throw new TypeError("connect ECONNREFUSED");
    };
    app.answers.push(down, down, down);
    const answer = await push({ ids: ["r1-a"] });
    expect(answer.status).toBe(503);
    expect(answer.json.error).toBe("app_unavailable");
    expect(app.calls).toHaveLength(3);
    expect((await sync()).acked).toBe(0);
  });

  it("gives up on an app slower than the timeout", async () => {
    const { app, push } = await setup({ timeoutMs: 50, firstSnapshotTimeoutMs: 50 });
    const slow = (call: AppCall) =>
      new Promise<Response>((resolve) => setTimeout(() => resolve(app.apply(call)), 300));
    app.answers.push(slow, slow, slow);
    const answer = await push({ ids: ["r1-a"] });
    expect(answer.status).toBe(503);
    expect(answer.json.message).toContain("50 ms");
  });

  it("tries again after a 503, waiting as a Retry-After asks", async () => {
    const { app, push, sync } = await setup();
    app.answers.push(() => new Response("busy", { status: 503, headers: { "retry-after": "1" } }));
    const started = Date.now();
    const answer = await push({ ids: ["r1-a"] });
    expect(answer.status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(app.calls).toHaveLength(2);
    expect((await sync()).rows).toContain("r1-a");
  });

  it("passes a PushFailed and other 4xx answers through, recording nothing", async () => {
    const { app, push, sync } = await setup();
    const failed = {
      pushResponse: {
        kind: "PushFailed",
        origin: "server",
        reason: "database",
        message: "the app's database is read-only",
        mutationIDs: [{ clientID: "c", id: 1 }],
      },
    };
    app.answers.push(() => Response.json(failed));
    const first = await push({ ids: ["r1-a"] }, 1);
    expect(first).toMatchObject({ status: 200, json: failed });
    app.answers.push(() => Response.json({ error: "forbidden", message: "not yours" }, { status: 403 }));
    const second = await push({ ids: ["r1-a"] }, 1);
    expect(second).toMatchObject({ status: 403, json: { error: "forbidden", message: "not yours" } });
    expect((await sync()).acked).toBe(0);
  });

  it("refuses an answer that leaves a mutation unacknowledged, recording nothing", async () => {
    const { app, push, sync } = await setup();
    app.answers.push(() => Response.json({ mutations: [] }));
    const answer = await push({ ids: ["r1-a"] });
    expect(answer.status).toBe(502);
    expect(answer.json.error).toBe("mutate_failed");
    app.answers.push(() => Response.json({ nope: true }));
    expect((await push({ ids: ["r1-a"] }, 1)).status).toBe(502);
    expect((await sync()).acked).toBe(0);
  });

  it("waits for writes that reach the upstream after the app answered", async () => {
    const { upstream, app, push, sync } = await setup();
    app.answers.push((call) => {
      // The app committed, but its upstream's feed shows it only a little later.
      const watermark = upstream.watermark + 1;
      setTimeout(() => upstream.commit([{ id: "r1-late", n: 1 }]), 100);
      return Response.json({
        mutations: [{ id: { clientID: "c", id: call.body.mutations[0]!.id }, result: {} }],
        watermark,
      });
    });
    expect((await push({ ids: [] })).status).toBe(200);
    const seen = await sync();
    expect(seen.rows).toContain("r1-late");
    expect(seen.acked).toBe(1);
  });

  it("answers upstream_unavailable once effectsWaitMs passed while the upstream does not answer, and acknowledges nothing", async () => {
    const { upstream, app, push, sync } = await setup({ effectsWaitMs: 300 });
    // From the app's answer on, the upstream takes the call and does not answer until released.
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const changes = upstream.changes.bind(upstream);
    app.answers.push((call) => {
      upstream.changes = async (after, limit) => {
        await held;
        return changes(after, limit);
      };
      return app.apply(call);
    });
    // Without the bound the push would wait for the pass, which waits for the upstream.
    const answer = await push({ ids: ["r1-a"] }, 1);
    expect(answer.status).toBe(503);
    expect(answer.json.error).toBe("upstream_unavailable");
    expect(answer.json.message).toMatch(/did not come back from the upstream.*in 300 ms/);
    release();
    upstream.changes = changes;
    // Pushed again, the app finds it applied; acknowledged only now, with its row.
    expect((await push({ ids: ["r1-a"] }, 1)).status).toBe(200);
    const seen = await sync();
    expect(seen.acked).toBe(1);
    expect(seen.ackedBeforeRows).toEqual([]);
    expect(seen.rows).toContain("r1-a");
  });

  it("needs an upstream", () => {
    const upstream = new ScriptedUpstream();
    const { upstream: _, ...withoutUpstream } = config(upstream, new App(upstream));
    expect(() => resolveConfig(withoutUpstream)).toThrow(/delegated push needs an upstream/);
  });
});
