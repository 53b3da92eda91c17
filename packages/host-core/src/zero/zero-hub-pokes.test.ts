import { afterEach, describe, expect, it } from "vitest";
import { testService } from "../../test/test-host.js";
import { config, cookieOf, patchesOf, push, recorder, settle } from "../../test/zero-hub-fixtures.js";
import type { NamespaceService } from "../namespace/namespace-service.js";
import { ZeroHub } from "./zero-hub.js";
import type { ZeroSocket } from "./zero-socket.js";

const services: NamespaceService[] = [];
afterEach(() => {
  for (const service of services.splice(0)) service.close();
});

/** A client of `user`'s group; one new to the group (no cookie) desires all todos. */
function connectGroup(
  hub: ZeroHub,
  socket: ZeroSocket,
  user: string,
  group: string,
  baseCookie: string | null,
  clientID = `${group}-c`,
) {
  return hub.connect(
    {
      clientID,
      clientGroupID: group,
      baseCookie,
      lmid: 0,
      wsid: `${clientID}-${baseCookie ?? "new"}`,
      init: {
        desiredQueriesPatch: (baseCookie === null
          ? [{ op: "put", hash: "all", name: "allTodos", args: [] }]
          : []) as never,
      },
      authToken: user,
      protocol: null,
    },
    { userID: user },
    socket,
  );
}

const rowsOf = (socket: { frames: unknown[][] }) =>
  patchesOf(socket.frames, "rowsPatch").map((op) => JSON.stringify(op));

describe("ZeroHub with many groups alike", () => {
  it("pokes them from one pull, and each group's state moves with it (a restart goes on from each cookie)", async () => {
    const { service } = await testService(config);
    services.push(service);
    const groups = ["g1", "g2", "g3"].map((id) => ({ id, socket: recorder(), user: "alice" }));
    const bob = { id: "b1", socket: recorder(), user: "bob" };
    const all = [...groups, bob];
    const connections = all.map((g) => connectGroup(service.zero, g.socket, g.user, g.id, null));
    await settle();
    // Alice's later groups took the query rows of her first instead of evaluating (Bob may not).
    expect(service.contexts.admin.counters.queriesCopied).toBe(2);
    const recomputed = service.contexts.admin.counters.queriesRecomputed;
    push(service, "alice", 1, "a1");
    push(service, "bob", 1, "b-row");
    service.zero.changed();
    await settle();
    // Alice's three groups took one pull's answer, Bob's group a pull of its own.
    expect(service.contexts.admin.counters.queriesRecomputed - recomputed).toBe(2);
    for (const { socket } of groups) {
      const rows = rowsOf(socket).join();
      expect(rows).toContain('"a1"');
      expect(rows).not.toContain("b-row");
    }
    expect(rowsOf(bob.socket).join()).toContain("b-row");
    expect(rowsOf(bob.socket).join()).not.toContain('"a1"');
    const cookies = all.map((g) => cookieOf(g.socket));
    for (const connection of connections) connection.socketClosed();

    // A new process: every group is back with the cookie of its last poke, and the next write
    // reaches each incrementally (no clear), as their stored state moved with the shared pull.
    const restarted = new ZeroHub(service.contexts.zero, { log() {} }, () =>
      Promise.reject(new Error("unused")),
    );
    const resumed = all.map((g, i) => ({ ...g, socket: recorder(), cookie: cookies[i]! }));
    for (const g of resumed) connectGroup(restarted, g.socket, g.user, g.id, g.cookie);
    await settle();
    push(service, "alice", 2, "a2");
    restarted.changed();
    await settle();
    for (const g of resumed.slice(0, 3)) {
      const text = JSON.stringify(g.socket.frames);
      expect(text).toContain('"a2"');
      expect(text).not.toContain('"clear"');
      expect(text).not.toContain('"a1"');
      expect(g.socket.frames.find((f) => f[0] === "pokeStart")![1]).toMatchObject({ baseCookie: g.cookie });
    }
    expect(JSON.stringify(resumed[3]!.socket.frames)).not.toContain('"a2"');
  });
});

describe("ZeroHub with a connection behind its group", () => {
  it("resets only the connection that is more than a poke behind; then all go on from one cookie", async () => {
    const { service } = await testService(config);
    services.push(service);
    push(service, "alice", 1, "a1");
    const tab1 = recorder();
    const tab2 = recorder();
    connectGroup(service.zero, tab1, "alice", "g1", null, "c1");
    const away = connectGroup(service.zero, tab2, "alice", "g1", null, "c2");
    await settle();
    const before = cookieOf(tab2);
    // The second tab goes away; the first gets two pokes it does not (one it would get again).
    away.socketClosed();
    for (const [id, row] of [
      [2, "a2"],
      [3, "a2b"],
    ] as const) {
      push(service, "alice", id, row);
      service.zero.changed();
      await settle();
    }
    expect(cookieOf(tab1) > before).toBe(true);

    // The second tab is back with its older cookie.
    const seen = tab1.frames.length;
    const back = recorder();
    connectGroup(service.zero, back, "alice", "g1", before, "c2");
    await settle();
    const resetFrames = JSON.stringify(back.frames);
    expect(resetFrames).toContain('"clear"');
    for (const id of ["a1", "a2", "a2b"]) expect(resetFrames).toContain(`"${id}"`);
    // The first tab is not reset: at most an empty poke moving it to the cookie both are at.
    const later = tab1.frames.slice(seen);
    expect(JSON.stringify(later)).not.toContain('"clear"');
    expect(patchesOf(later, "rowsPatch")).toEqual([]);
    expect(cookieOf(back)).toBe(cookieOf(tab1));

    // And the next write reaches both incrementally, from that cookie.
    const cookie = cookieOf(tab1);
    const [from1, from2] = [tab1.frames.length, back.frames.length];
    push(service, "alice", 4, "a3");
    service.zero.changed();
    await settle();
    for (const frames of [tab1.frames.slice(from1), back.frames.slice(from2)]) {
      expect(frames.find((f) => f[0] === "pokeStart")![1]).toMatchObject({ baseCookie: cookie });
      expect(JSON.stringify(frames)).toContain('"a3"');
      expect(JSON.stringify(frames)).not.toContain('"clear"');
    }
  });
});
