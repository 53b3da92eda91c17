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

describe("ZeroHub with many groups alike", () => {
  /** A group of `user`'s, with one client desiring all todos. */
  function connectGroup(
    hub: ZeroHub,
    socket: ZeroSocket,
    user: string,
    group: string,
    baseCookie: string | null,
  ) {
    return hub.connect(
      {
        clientID: `${group}-c`,
        clientGroupID: group,
        baseCookie,
        lmid: 0,
        wsid: `${group}-${baseCookie ?? "new"}`,
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

  it("pokes them from one pull, and each group's state moves with it (a restart goes on from each cookie)", async () => {
    const { service } = await testService(config);
    services.push(service);
    const groups = ["g1", "g2", "g3"].map((id) => ({ id, socket: recorder(), user: "alice" }));
    const bob = { id: "b1", socket: recorder(), user: "bob" };
    const all = [...groups, bob];
    const connections = all.map((g) => connectGroup(service.zero, g.socket, g.user, g.id, null));
    await settle();
    const recomputed = service.counters.queriesRecomputed;
    push(service, "alice", 1, "a1");
    push(service, "bob", 1, "b-row");
    service.zero.changed();
    await settle();
    // Alice's three groups took one pull's answer, Bob's group a pull of its own.
    expect(service.counters.queriesRecomputed - recomputed).toBe(2);
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
    const restarted = new ZeroHub(service, { log() {} }, () => Promise.reject(new Error("unused")));
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
