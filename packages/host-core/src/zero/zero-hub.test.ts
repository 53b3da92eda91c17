import { afterEach, describe, expect, it } from "vitest";
import { testService } from "../../test/test-host.js";
import {
  config,
  connectAlice,
  cookieOf,
  ends,
  patchesOf,
  push,
  recorder,
  settle,
} from "../../test/zero-hub-fixtures.js";
import { DEFAULT_WEIGHTS } from "../config/quota-config.js";
import type { NamespaceService } from "../namespace/namespace-service.js";
import { systemClock } from "../ports/clock.js";
import { memoryQuotaStore } from "../ports/quota-store.js";
import { UserBudgets } from "../quotas/user-budgets.js";
import type { ZeroConnectionState } from "./zero-connection-state.js";
import { ZeroHub } from "./zero-hub.js";

const services: NamespaceService[] = [];
afterEach(() => {
  for (const service of services.splice(0)) service.close();
});

/** The desired-queries patch of a client that follows the todo a1 alone. */
const FOLLOW_A1 = [{ op: "put", hash: "one", name: "oneTodo", args: [{ id: "a1" }] }];

describe("ZeroHub.restore", () => {
  it("re-attaches a connection from its saved state: the next poke starts at its cookie, with no reset", async () => {
    const { service } = await testService(config);
    services.push(service);
    push(service, "alice", 1, "a1");
    const first = recorder();
    const connection = service.zero.connect(
      {
        clientID: "c1",
        clientGroupID: "g1",
        baseCookie: null,
        lmid: 0,
        wsid: "w1",
        init: { desiredQueriesPatch: [{ op: "put", hash: "all", name: "allTodos", args: [] }] },
        authToken: "alice",
        protocol: null,
      },
      { userID: "alice" },
      first,
    );
    await settle();
    expect(ends(first.frames)).toHaveLength(1);
    const saved = first.saved!;
    expect(saved).toMatchObject({ clientID: "c1", clientGroupID: "g1", initialized: true, pokes: 1 });
    expect(saved.cookie).toBe((ends(first.frames)[0]![1] as { cookie: string }).cookie);
    // The process goes; the socket stays open, and a new process builds a hub of its own.
    connection.socketClosed();
    const hub = new ZeroHub(service.contexts.zero, { log() {} }, () => Promise.reject(new Error("unused")));
    const second = recorder();
    hub.restore(saved, second);
    expect(second.frames).toEqual([]);
    push(service, "alice", 2, "a2");
    push(service, "bob", 1, "b1");
    hub.changed();
    await settle();
    const [start, ...rest] = second.frames;
    expect(start).toEqual([
      "pokeStart",
      expect.objectContaining({ pokeID: "w1:2", baseCookie: saved.cookie }),
    ]);
    const text = JSON.stringify(rest);
    expect(text).toContain('"a2"');
    expect(text).not.toContain('"a1"');
    expect(text).not.toContain('"b1"');
    expect(text).not.toContain('"clear"');
    expect(second.saved!.cookie).toBe((ends(second.frames)[0]![1] as { cookie: string }).cookie);
    expect(second.saved!.cookie! > saved.cookie!).toBe(true);
  });

  it("refuses a saved state of another user's client group, and one ahead of the namespace", async () => {
    const { service } = await testService(config);
    services.push(service);
    const hub = new ZeroHub(service.contexts.zero, { log() {} }, () => Promise.reject(new Error("unused")));
    const state: ZeroConnectionState = {
      clientID: "c1",
      clientGroupID: "g1",
      wsid: "w1",
      claims: { userID: "alice" },
      authToken: null,
      cookie: null,
      initialized: true,
      pokes: 0,
    };
    hub.restore(state, recorder());
    expect(() => hub.restore({ ...state, clientID: "c2", claims: { userID: "bob" } }, recorder())).toThrow(
      /another user/,
    );
    expect(() =>
      hub.restore({ ...state, clientGroupID: "g2", cookie: "0000000000009999.00000000" }, recorder()),
    ).toThrow(/behind/);
  });
});

describe("ZeroHub.connect after a restart", () => {
  it("goes on from the client's cookie after a restart, and catches up a client that missed pokes", async () => {
    const { service } = await testService(config);
    services.push(service);
    push(service, "alice", 1, "a1");
    const first = recorder();
    const connection = connectAlice(service.zero, first, { baseCookie: null, wsid: "w1" });
    await settle();
    const missed = cookieOf(first);
    push(service, "alice", 2, "a2");
    service.zero.changed();
    await settle();
    const latest = cookieOf(first);
    expect(latest > missed).toBe(true);
    connection.socketClosed();

    // A new process, and the client back with the cookie of the last poke it got.
    const restarted = new ZeroHub(service.contexts.zero, { log() {} }, () =>
      Promise.reject(new Error("unused")),
    );
    const resumed = recorder();
    connectAlice(restarted, resumed, { baseCookie: latest, wsid: "w2" });
    await settle();
    push(service, "alice", 3, "a3");
    restarted.changed();
    await settle();
    const [start, ...rest] = resumed.frames.filter((f) => String(f[0]).startsWith("poke"));
    expect(start).toEqual(["pokeStart", expect.objectContaining({ baseCookie: latest })]);
    const text = JSON.stringify(rest);
    expect(text).toContain('"a3"');
    expect(text).not.toContain('"a1"');
    expect(text).not.toContain('"clear"');

    // Another new process, and a client that missed the pokes of a2 and a3: it gets those two,
    // not every row again.
    const again = new ZeroHub(service.contexts.zero, { log() {} }, () => Promise.reject(new Error("unused")));
    const behind = recorder();
    connectAlice(again, behind, { baseCookie: missed, wsid: "w3" });
    await settle();
    const caughtUp = JSON.stringify(behind.frames);
    expect(caughtUp).not.toContain('"clear"');
    expect(caughtUp).not.toContain('"a1"');
    for (const id of ["a2", "a3"]) expect(caughtUp).toContain(`"${id}"`);
  });
});

describe("ZeroHub after a restart, with two clients in a group", () => {
  it("knows which client desires which query: one client's going takes only its own queries", async () => {
    const { service } = await testService(config);
    services.push(service);
    push(service, "alice", 1, "a1");
    push(service, "alice", 2, "a2");
    // c1 follows one todo, c2 all of them.
    const one = recorder();
    const c1 = connectAlice(service.zero, one, {
      baseCookie: null,
      wsid: "w1",
      queries: FOLLOW_A1,
    });
    await settle();
    const all = recorder();
    const c2 = connectAlice(service.zero, all, {
      clientID: "c2",
      baseCookie: cookieOf(one),
      wsid: "w2",
      queries: [{ op: "put", hash: "all", name: "allTodos", args: [] }],
    });
    await settle();
    const cookie = cookieOf(all);
    c1.socketClosed();
    c2.socketClosed();

    // A new process; both clients come back at the group's cookie with nothing changed.
    const restarted = new ZeroHub(service.contexts.zero, { log() {} }, () =>
      Promise.reject(new Error("unused")),
    );
    const first = recorder();
    connectAlice(restarted, first, { clientID: "c1", baseCookie: cookie, wsid: "w-c1-first", queries: [] });
    await settle();
    const second = recorder();
    const back = connectAlice(restarted, second, {
      clientID: "c2",
      baseCookie: cookie,
      wsid: "w-c2-second",
      queries: [],
    });
    await settle();
    // c2 tells the server that c1 is gone for good: c1's query goes, c2's stays.
    back.receive(JSON.stringify(["deleteClients", { clientIDs: ["c1"] }]));
    await settle();
    push(service, "alice", 3, "a3");
    restarted.changed();
    await settle();
    expect(service.contexts.zero.storedQueries("g1").map((q) => q.hash)).toEqual(["all"]);
    const patches = patchesOf(second.frames, "rowsPatch");
    expect(patches.filter((op) => op.op === "del")).toEqual([]);
    expect(JSON.stringify(patches)).toContain('"a3"');

    // And a client reset after the restart is told its own queries only.
    const again = new ZeroHub(service.contexts.zero, { log() {} }, () => Promise.reject(new Error("unused")));
    const reset = recorder();
    connectAlice(again, reset, { clientID: "c2", baseCookie: null, wsid: "w-c2-reset", queries: [] });
    await settle();
    const desired = reset.frames
      .filter((f) => f[0] === "pokePart")
      .map((f) => (f[1] as { desiredQueriesPatches?: unknown }).desiredQueriesPatches)
      .find((patches) => patches !== undefined);
    expect(desired).toEqual({ c2: [{ op: "put", hash: "all" }] });
  });

  it("keeps a stored query no client is known to desire until a client lets go of it", async () => {
    const { service } = await testService(config);
    services.push(service);
    push(service, "alice", 1, "a1");
    const socket = recorder();
    const c1 = connectAlice(service.zero, socket, {
      baseCookie: null,
      wsid: "w1",
      queries: FOLLOW_A1,
    });
    await settle();
    const cookie = cookieOf(socket);
    c1.socketClosed();
    // As a namespace whose clients' desires were never stored (or lost in a crash) holds it.
    service.transaction(() =>
      service.zeroStore.write("g1", {
        desired: [{ clientID: "c1", hash: "one", op: "del" }],
        acknowledged: [],
        forgotten: [],
      }),
    );

    const restarted = new ZeroHub(service.contexts.zero, { log() {} }, () =>
      Promise.reject(new Error("unused")),
    );
    const back = recorder();
    const c2 = connectAlice(restarted, back, {
      clientID: "c2",
      baseCookie: cookie,
      wsid: "w-c2-back",
      queries: [],
    });
    await settle();
    restarted.changed();
    await settle();
    expect(service.contexts.zero.storedQueries("g1").map((q) => q.hash)).toEqual(["one"]);
    c2.receive(
      JSON.stringify(["changeDesiredQueries", { desiredQueriesPatch: [{ op: "del", hash: "one" }] }]),
    );
    await settle();
    expect(service.contexts.zero.storedQueries("g1")).toEqual([]);
    expect(patchesOf(back.frames, "rowsPatch")).toContainEqual(expect.objectContaining({ op: "del" }));
  });
});

describe("ZeroHub and mutation results", () => {
  it("puts a refused mutation's result again after a restart until the client acknowledges it", async () => {
    const { service } = await testService(config);
    services.push(service);
    push(service, "alice", 1, "a1");
    const first = recorder();
    const connection = connectAlice(service.zero, first, { baseCookie: null, wsid: "w1" });
    await settle();
    // a1 exists: the insert fails, an application error.
    connection.receive(
      JSON.stringify([
        "push",
        {
          clientGroupID: "g1",
          mutations: [
            { type: "custom", id: 1, clientID: "c1", name: "createTodo", args: [{ id: "a1" }], timestamp: 1 },
          ],
          pushVersion: 1,
          timestamp: 1,
          requestID: "r1",
        },
      ]),
    );
    await settle();
    await settle();
    expect(patchesOf(first.frames, "mutationsPatch")).toEqual([
      {
        op: "put",
        mutation: { id: { clientID: "c1", id: 1 }, result: expect.objectContaining({ error: "app" }) },
      },
    ]);
    const cookie = cookieOf(first);
    connection.socketClosed();

    // The client never acknowledged it; after a restart the next poke puts it again.
    const restarted = new ZeroHub(service.contexts.zero, { log() {} }, () =>
      Promise.reject(new Error("unused")),
    );
    const second = recorder();
    const back = connectAlice(restarted, second, { baseCookie: cookie, wsid: "w2" });
    await settle();
    push(service, "alice", 2, "a2");
    restarted.changed();
    await settle();
    expect(patchesOf(second.frames, "mutationsPatch")).toEqual([
      {
        op: "put",
        mutation: { id: { clientID: "c1", id: 1 }, result: expect.objectContaining({ error: "app" }) },
      },
    ]);
    back.receive(JSON.stringify(["ackMutationResponses", { clientID: "c1", id: 1 }]));
    await settle();
    expect(patchesOf(second.frames, "mutationsPatch").at(-1)).toEqual({
      op: "del",
      id: { clientID: "c1", id: 1 },
    });
    back.socketClosed();

    // Acknowledged: a later restart puts it no more.
    const again = new ZeroHub(service.contexts.zero, { log() {} }, () => Promise.reject(new Error("unused")));
    const third = recorder();
    connectAlice(again, third, { baseCookie: null, wsid: "w3" });
    await settle();
    expect(patchesOf(third.frames, "mutationsPatch")).toEqual([]);
  });
});

describe("ZeroHub and a push that fails after its commit", () => {
  it("has stored a mutation's application error with its id, so the client still gets it", async () => {
    const { service } = await testService(config);
    services.push(service);
    push(service, "alice", 1, "a1");
    const socket = recorder();
    const connection = connectAlice(service.zero, socket, { baseCookie: null, wsid: "w1" });
    await settle();
    const cookie = cookieOf(socket);
    // a1 exists: the insert fails, an application error. The push commits, then fails before
    // it answers (as a process that dies there would).
    service.contexts.admin.setKnob("faults", { push_after_commit_before_response: "error" });
    connection.receive(
      JSON.stringify([
        "push",
        {
          clientGroupID: "g1",
          mutations: [
            { type: "custom", id: 1, clientID: "c1", name: "createTodo", args: [{ id: "a1" }], timestamp: 1 },
          ],
          pushVersion: 1,
          timestamp: 1,
          requestID: "r1",
        },
      ]),
    );
    await settle();
    await settle();
    expect(service.contexts.zero.lastMutationID("g1", "c1")).toBe(1);
    expect(service.zeroStore.readResults("g1")).toEqual([
      { clientID: "c1", id: 1, result: expect.objectContaining({ error: "app" }) },
    ]);
    // A new process: the client comes back and its next poke carries the error.
    const restarted = new ZeroHub(service.contexts.zero, { log() {} }, () =>
      Promise.reject(new Error("unused")),
    );
    const back = recorder();
    connectAlice(restarted, back, { baseCookie: cookie, wsid: "w2" });
    await settle();
    push(service, "alice", 2, "a2");
    restarted.changed();
    await settle();
    expect(patchesOf(back.frames, "mutationsPatch")).toEqual([
      {
        op: "put",
        mutation: { id: { clientID: "c1", id: 1 }, result: expect.objectContaining({ error: "app" }) },
      },
    ]);
  });
});

describe("ZeroHub and the user's request budget", () => {
  it("refuses a push past the budget as MutationRateLimited and a change of queries with a backoff, applying neither", async () => {
    const { service } = await testService(config);
    services.push(service);
    // 20 units a minute, admitted while under: a push of one mutation costs 11, so a third is refused.
    const budgets = new UserBudgets(
      { requestUnits: 20, windowMs: 60_000, weights: DEFAULT_WEIGHTS, newNamespacesPerDay: null },
      memoryQuotaStore(),
      systemClock,
      () => {},
    );
    const hub = new ZeroHub(
      service.contexts.zero,
      { log() {} },
      () => Promise.reject(new Error("unused")),
      (userID, cost) => budgets.chargeZeroMessage(userID, cost),
    );
    const socket = recorder();
    let closed = false;
    socket.close = () => {
      closed = true;
    };
    const connection = connectAlice(hub, socket, { baseCookie: null, wsid: "w1" });
    await settle();
    const pushOf = (id: number, todo: string) =>
      JSON.stringify([
        "push",
        {
          clientGroupID: "g1",
          mutations: [
            { type: "custom", id, clientID: "c1", name: "createTodo", args: [{ id: todo }], timestamp: 1 },
          ],
          pushVersion: 1,
          timestamp: 1,
          requestID: `r${id}`,
        },
      ]);
    connection.receive(pushOf(1, "q1"));
    connection.receive(pushOf(2, "q2"));
    connection.receive(pushOf(3, "q3"));
    await settle();
    await settle();
    const todos = () => service.store.db.query("SELECT id FROM todo ORDER BY id", []).map((row) => row[0]);
    expect(todos()).toEqual(["q1", "q2"]);
    expect(service.contexts.zero.lastMutationID("g1", "c1")).toBe(2);
    expect(socket.frames.filter((f) => f[0] === "error")).toEqual([
      [
        "error",
        {
          kind: "MutationRateLimited",
          message: expect.stringContaining("request quota spent"),
          origin: "zeroCache",
        },
      ],
    ]);
    expect(closed).toBe(false);

    connection.receive(
      JSON.stringify([
        "changeDesiredQueries",
        { desiredQueriesPatch: [{ op: "put", hash: "one", name: "oneTodo", args: [{ id: "q1" }] }] },
      ]),
    );
    await settle();
    expect(socket.frames.at(-1)).toEqual([
      "error",
      {
        kind: "ServerOverloaded",
        origin: "zeroCache",
        minBackoffMs: expect.any(Number),
        message: expect.stringContaining("request quota spent"),
      },
    ]);
    expect(closed).toBe(true);
    expect(service.contexts.zero.storedQueries("g1").map((q) => q.hash)).toEqual(["all"]);
  });
});
