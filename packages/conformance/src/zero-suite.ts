import { MAX_ID_LENGTH } from "@weir/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NativeClient } from "./http-client.js";
import type { ConformanceTarget } from "./target.js";
import { zeroCatchUpSuite } from "./zero-catch-up-suite.js";
import { zeroClaimsSuite } from "./zero-claims-suite.js";
import { zeroRefusalsSuite } from "./zero-refusals-suite.js";
import {
  connectZero,
  customPushFrame,
  pokePartsOf,
  until,
  type ZeroConnectOptions,
  type ZeroTestSocket,
} from "./zero-socket-client.js";

/**
 * Registers the raw-socket tests of the Zero dialect (vitest) against a host that `makeTarget`
 * starts with `conformanceConfig()`: Zero's sync protocol spoken by hand, for what the stock
 * client never sends: frames weir must refuse with the documented error, closing the socket and
 * writing nothing.
 */
export function runZeroConformance(name: string, makeTarget: () => Promise<ConformanceTarget>): void {
  describe(`the Zero dialect: ${name}`, () => {
    let target: ConformanceTarget | undefined;
    beforeAll(async () => {
      target = await makeTarget();
    });
    afterAll(async () => {
      await target?.close();
    });
    zeroSuite(() => {
      if (!target) throw new Error("the conformance target did not start");
      return target;
    });
  });
}

export function zeroSuite(current: () => ConformanceTarget): void {
  const connect = (ns: string, options?: ZeroConnectOptions) => connectZero(current().url, ns, options);
  const parts = pokePartsOf;
  const customPush = customPushFrame;

  it("echoes the protocol header, answers connected, then pokes the first answer and pongs a ping", async () => {
    const socket = await connect("zp1");
    expect(socket.ws.protocol).not.toBe("");
    expect(await socket.next("connected")).toMatchObject({ wsid: "w1" });
    expect(await socket.next("pokeEnd")).toMatchObject({
      cookie: expect.stringMatching(/^[0-9]{16}\.[0-9]{8}$/),
    });
    socket.ws.send(JSON.stringify(["ping", {}]));
    expect(await socket.next("pong")).toEqual({});
    socket.ws.close();
  });

  describe("refusals", () => zeroRefusalsSuite(current));

  it("pokes only the groups a commit concerns: another user's group hears nothing of a write it cannot see", async () => {
    const ns = `zfan${Math.random().toString(36).slice(2, 8)}`;
    const pokes = (socket: ZeroTestSocket) => socket.messages.filter((m) => m[0] === "pokeEnd").length;
    const sockets = await Promise.all(["alice", "bob"].map((user) => connect(ns, { user })));
    for (const socket of sockets) {
      await socket.next("pokeEnd");
      socket.ws.send(
        JSON.stringify([
          "changeDesiredQueries",
          { desiredQueriesPatch: [{ op: "put", hash: "h", name: "firstTodos", args: [{ limit: 10 }] }] },
        ]),
      );
      await until(() => pokes(socket) >= 2);
    }
    const [alice, bob] = sockets as [ZeroTestSocket, ZeroTestSocket];
    const bobPokes = pokes(bob);
    const alicePokes = pokes(alice);
    await new NativeClient(current(), ns, "alice").push([{ name: "createTodo", args: { id: "t1" } }]);
    await until(() => pokes(alice) > alicePokes);
    expect(JSON.stringify(pokePartsOf(alice))).toContain('"t1"');
    // A poke of bob's group would have been sent in the same round as alice's, before his pong.
    const pongs = bob.messages.filter((m) => m[0] === "pong").length;
    bob.ws.send(JSON.stringify(["ping", {}]));
    await until(() => bob.messages.filter((m) => m[0] === "pong").length > pongs);
    expect(pokes(bob)).toBe(bobPokes);
    // Bob's own write reaches his group.
    await new NativeClient(current(), ns, "bob").push([{ name: "createTodo", args: { id: "t2" } }]);
    await until(() => pokes(bob) > bobPokes);
    for (const socket of sockets) socket.ws.close();
  });

  it("pokes a refused mutation's result with its id, and deletes it once acknowledged", async () => {
    const group = "gpush";
    const socket = await connect("zp8", { group });
    await socket.next("pokeEnd");
    const push = (id: number, args: unknown) =>
      JSON.stringify([
        "push",
        {
          clientGroupID: group,
          mutations: [{ type: "custom", id, clientID: "c1", name: "createTodo", args: [args], timestamp: 1 }],
          pushVersion: 1,
          timestamp: 1,
          requestID: `r${id}`,
        },
      ]);
    socket.ws.send(push(1, { id: "t1" }));
    socket.ws.send(push(2, { id: "t1" }));
    await until(() => parts(socket).some((part) => part.mutationsPatch));
    const refused = parts(socket).find((part) => part.mutationsPatch)!;
    expect(refused.mutationsPatch).toEqual([
      {
        op: "put",
        mutation: { id: { clientID: "c1", id: 2 }, result: expect.objectContaining({ error: "app" }) },
      },
    ]);
    expect(
      parts(socket).some((part) => (part.lastMutationIDChanges as Record<string, number>)?.c1 === 2),
    ).toBe(true);
    socket.ws.send(JSON.stringify(["ackMutationResponses", { clientID: "c1", id: 2 }]));
    await until(() =>
      parts(socket).some((part) => JSON.stringify(part.mutationsPatch ?? []).includes('"del"')),
    );
    socket.ws.close();
  });

  it("answers a refused credential in updateAuth with Unauthorized, not a server failure", async () => {
    const socket = await connect("zp11");
    await socket.next("pokeEnd");
    // No user id is this long: the host's authentication refuses it.
    socket.ws.send(JSON.stringify(["updateAuth", { auth: "x".repeat(MAX_ID_LENGTH + 1) }]));
    expect(await socket.next("error")).toMatchObject({ kind: "Unauthorized", origin: "zeroCache" });
    expect((await socket.closed).code).toBe(1002);
  });

  it("answers InvalidConnectionRequestBaseCookie for the current version with a step it never handed out", async () => {
    const group = "ginvented";
    const socket = await connect("zp12", { group });
    await socket.next("pokeEnd");
    socket.ws.send(customPush(group, 1, { id: "inv-1" }));
    await until(() => {
      const at = socket.messages.findIndex(
        (m) =>
          m[0] === "pokePart" &&
          (m[1] as { lastMutationIDChanges?: { c1?: number } }).lastMutationIDChanges?.c1 === 1,
      );
      return at >= 0 && socket.messages.slice(at).some((m) => m[0] === "pokeEnd");
    });
    const ends = socket.messages.filter((m) => m[0] === "pokeEnd");
    const cookie = (ends[ends.length - 1]![1] as { cookie: string }).cookie;
    const invented = await connect("zp12", {
      group,
      clientID: "c2",
      cookie: `${cookie.slice(0, 16)}.99999999`,
    });
    await until(() => invented.messages.some((m) => m[0] === "error" || m[0] === "pokeEnd"));
    expect(invented.messages.find((m) => m[0] === "error")?.[1]).toMatchObject({
      kind: "InvalidConnectionRequestBaseCookie",
    });
    expect((await invented.closed).code).toBe(1002);
    expect(invented.messages.some((m) => m[0] === "pokeStart")).toBe(false);
    // The cookie it handed out is taken.
    const handed = await connect("zp12", { group, clientID: "c2", cookie });
    await handed.next("connected");
    handed.ws.send(JSON.stringify(["ping", {}]));
    expect(await handed.next("pong")).toEqual({});
    expect(handed.messages.some((m) => m[0] === "error")).toBe(false);
    handed.ws.close();
    socket.ws.close();
  });

  it("refuses another user's connect to a client group before disclosing anything, and its owner connects after", async () => {
    const ns = "zp13";
    const group = "gowned";
    // The group is alice's: three mutations of her client c1, pushed over HTTP.
    const target = current();
    const pushed = await fetch(`${target.url}/${ns}/push`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: await target.auth("alice") },
      body: JSON.stringify({
        clientGroupID: group,
        pushVersion: 1,
        mutations: [1, 2, 3].map((id) => ({
          type: "custom",
          id,
          clientID: "c1",
          name: "createTodo",
          args: [{ id: `own-${id}` }],
        })),
      }),
    });
    expect(pushed.status).toBe(200);
    const rounds = target.restart ? ["running", "restarted"] : ["running"];
    for (const round of rounds) {
      if (round === "restarted") await target.restart!();
      // Bob names alice's group: with an lmid above hers (which would tell him her last id), and
      // with none.
      for (const lmid of [7, 0]) {
        const forged = await connect(ns, { group, user: "bob", lmid });
        const error = await forged.next("error");
        expect(error, `${round}, lmid ${lmid}`).toMatchObject({ kind: "Unauthorized" });
        expect(JSON.stringify(error)).not.toMatch(/[0-9]/);
        expect((await forged.closed).code).toBe(1002);
        expect(forged.messages.some((m) => m[0] === "pokeStart")).toBe(false);
      }
      // Alice is not locked out of her group.
      const owner = await connect(ns, { group, lmid: 3 });
      await owner.next("pokeEnd");
      expect(
        owner.messages.some((m) => m[0] === "error"),
        round,
      ).toBe(false);
      owner.ws.close();
      await owner.closed;
    }
  });

  it("sends a client back at the cookie before its group's last poke that poke again, not a reset", async () => {
    const ns = "zp16";
    const group = "gmissed";
    const cookies = (socket: ZeroTestSocket) =>
      socket.messages.filter((m) => m[0] === "pokeEnd").map((m) => (m[1] as { cookie: string }).cookie);
    const a = await connect(ns, { group });
    await a.next("pokeEnd");
    a.ws.send(
      JSON.stringify([
        "changeDesiredQueries",
        { desiredQueriesPatch: [{ op: "put", hash: "hd", name: "doneTodos", args: [] }] },
      ]),
    );
    await until(() => cookies(a).length >= 2);
    const before = cookies(a).at(-1)!;
    // Another device of the same user writes a row the group's query holds: one poke.
    const writer = await connect(ns, { group: "gwriter" });
    await writer.next("pokeEnd");
    writer.ws.send(customPush("gwriter", 1, { id: "missed-1", done: true }));
    await until(() => cookies(a).length >= 3);
    const after = cookies(a).at(-1)!;
    // The client's socket dropped as that poke went out: it comes back with the cookie before it.
    a.ws.close();
    await a.closed;
    const again = await connect(ns, { group, cookie: before });
    await again.next("pokeEnd");
    expect(again.messages.find((m) => m[0] === "pokeStart")![1]).toMatchObject({ baseCookie: before });
    expect(JSON.stringify(parts(again))).not.toContain('"clear"');
    expect(JSON.stringify(parts(again))).toContain("missed-1");
    expect(cookies(again)).toEqual([after]);
    again.ws.close();
    writer.ws.close();
  });

  it("takes a new credential of the same user, and refuses another user's", async () => {
    const socket = await connect("zp10");
    await socket.next("pokeEnd");
    socket.ws.send(JSON.stringify(["updateAuth", { auth: "alice" }]));
    socket.ws.send(JSON.stringify(["ping", {}]));
    expect(await socket.next("pong")).toEqual({});
    socket.ws.send(JSON.stringify(["updateAuth", { auth: "bob" }]));
    expect(await socket.next("error")).toMatchObject({ kind: "Unauthorized" });
    expect((await socket.closed).code).toBe(1002);
  });

  describe("claims changes", () => zeroClaimsSuite(current));
  describe("a client behind its group's pokes", () => zeroCatchUpSuite(current));

  describe("the record of a client's mutations", () => {
    /** Pushes createTodo mutations 1..count of client c1 and waits until a poke confirms the last. */
    async function pushed(ns: string, group: string, count: number): Promise<void> {
      const socket = await connect(ns, { group });
      await socket.next("pokeEnd");
      const mutations = Array.from({ length: count }, (_, i) => ({
        type: "custom",
        id: i + 1,
        clientID: "c1",
        name: "createTodo",
        args: [{ id: `${group}-${i + 1}` }],
        timestamp: 1,
      }));
      socket.ws.send(
        JSON.stringify([
          "push",
          { clientGroupID: group, mutations, pushVersion: 1, timestamp: 1, requestID: "r" },
        ]),
      );
      await until(() =>
        parts(socket).some((part) => (part.lastMutationIDChanges as Record<string, number>)?.c1 === count),
      );
      socket.ws.close();
      await socket.closed;
    }

    it("takes a connect URL's lmid the server confirmed, and refuses one it never did", async () => {
      await pushed("zl1", "glmid", 2);
      for (const lmid of [0, 1, 2]) {
        const socket = await connect("zl1", { group: "glmid", lmid });
        await socket.next("pokeEnd");
        expect(socket.messages.some((m) => m[0] === "error")).toBe(false);
        socket.ws.close();
        await socket.closed;
      }
      const ahead = await connect("zl1", { group: "glmid", lmid: 3 });
      expect(await ahead.next("error")).toEqual({
        kind: "InvalidConnectionRequestLastMutationID",
        message: expect.stringContaining("3"),
        origin: "zeroCache",
      });
      expect((await ahead.closed).code).toBe(1002);
      // A client group the server has no record of: any lmid above 0 was never acknowledged here.
      const unknown = await connect("zl1", { group: "gforgotten", lmid: 1 });
      expect(await unknown.next("error")).toMatchObject({ kind: "InvalidConnectionRequestLastMutationID" });
      expect(unknown.messages.some((m) => m[0] === "pokeStart")).toBe(false);
    });

    it("answers a pull (mutation recovery) with the confirmed ids of the user's other client group", async () => {
      await pushed("zl2", "gold", 3);
      const socket = await connect("zl2", { group: "gnew" });
      await socket.next("connected");
      socket.ws.send(JSON.stringify(["pull", { clientGroupID: "gold", cookie: null, requestID: "q1" }]));
      expect(await socket.next("pull")).toEqual({
        requestID: "q1",
        cookie: expect.stringMatching(/^[0-9]{16}\.[0-9]{8}$/),
        lastMutationIDChanges: { c1: 3 },
      });
      socket.ws.send(JSON.stringify(["pull", { clientGroupID: "gnone", cookie: "x", requestID: "q2" }]));
      await until(() => socket.messages.filter((m) => m[0] === "pull").length === 2);
      expect(socket.messages.filter((m) => m[0] === "pull")[1]![1]).toMatchObject({
        requestID: "q2",
        lastMutationIDChanges: {},
      });
      socket.ws.close();
      // Another user learns nothing of the group.
      const stranger = await connect("zl2", { group: "gbob", user: "bob" });
      await stranger.next("connected");
      stranger.ws.send(JSON.stringify(["pull", { clientGroupID: "gold", cookie: null, requestID: "q3" }]));
      expect(await stranger.next("pull")).toMatchObject({ requestID: "q3", lastMutationIDChanges: {} });
      stranger.ws.close();
    });
  });
}
