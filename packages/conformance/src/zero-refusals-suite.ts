import { expect, it } from "vitest";
import { CONFORMANCE_MAX_BODY_BYTES } from "./conformance-config.js";
import type { ConformanceTarget } from "./target.js";
import {
  connectZero,
  customPushFrame,
  pokePartsOf,
  until,
  type ZeroConnectOptions,
  zeroSecProtocol,
} from "./zero-socket-client.js";

/**
 * What a Zero socket must refuse, each with the documented error: malformed frames and pushes,
 * frames past the body limit, versions, cookies and credentials it does not take, queries the
 * server does not define. A refusal writes nothing.
 */
export function zeroRefusalsSuite(current: () => ConformanceTarget): void {
  const connect = (ns: string, options?: ZeroConnectOptions) => connectZero(current().url, ns, options);
  const parts = pokePartsOf;
  const secProtocol = zeroSecProtocol;
  const customPush = customPushFrame;
  /** The namespace's version, as a fresh client's pull answers it. */
  const watermark = async (ns: string): Promise<number> => {
    const target = current();
    const response = await fetch(`${target.url}/${ns}/pull`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: await target.auth("alice") },
      body: JSON.stringify({ clientGroupID: "probe", clientID: "probe", cookie: null }),
    });
    return ((await response.json()) as { cookie: number }).cookie;
  };

  it.each([
    ["a frame that is not JSON", "{not json"],
    ["a frame that is not a [type, body] pair", JSON.stringify({ push: {} })],
    ["an unknown message type", JSON.stringify(["explode", {}])],
    [
      "a push with a malformed mutation",
      JSON.stringify(["push", { clientGroupID: "g", mutations: [{ id: "x" }] }]),
    ],
  ])("refuses %s with InvalidMessage and closes, writing nothing", async (_, frame) => {
    const before = await watermark("zp2");
    const socket = await connect("zp2");
    await socket.next("pokeEnd");
    socket.ws.send(frame);
    expect(await socket.next("error")).toMatchObject({ kind: "InvalidMessage", origin: "zeroCache" });
    expect((await socket.closed).code).toBe(1002);
    expect(await watermark("zp2")).toBe(before);
  });

  it("refuses a push for another client group with InvalidPush, running none of it", async () => {
    const before = await watermark("zp3");
    const socket = await connect("zp3");
    await socket.next("pokeEnd");
    const mutation = {
      type: "custom",
      id: 1,
      clientID: "c1",
      name: "createTodo",
      args: [{ id: "t1" }],
      timestamp: 1,
    };
    socket.ws.send(
      JSON.stringify([
        "push",
        { clientGroupID: "other", mutations: [mutation], pushVersion: 1, timestamp: 1, requestID: "r" },
      ]),
    );
    expect(await socket.next("error")).toMatchObject({ kind: "InvalidPush" });
    expect((await socket.closed).code).toBe(1002);
    expect(await watermark("zp3")).toBe(before);
  });

  it("refuses a push with a lone surrogate in its args as a parse PushFailed, storing none of it", async () => {
    const before = await watermark("zp14");
    const group = "gsurrogate";
    const socket = await connect("zp14", { group });
    await socket.next("pokeEnd");
    // JSON.stringify writes a lone surrogate as an escape, as the stock client sends it.
    const mutations = ["x\ud800", "x\udbff"].map((id, i) => ({
      type: "custom",
      id: i + 1,
      clientID: "c1",
      name: "createTodo",
      args: [{ id }],
      timestamp: 1,
    }));
    socket.ws.send(
      JSON.stringify([
        "push",
        { clientGroupID: group, mutations, pushVersion: 1, timestamp: 1, requestID: "r" },
      ]),
    );
    await until(
      () =>
        socket.messages.some((m) => m[0] === "error") ||
        parts(socket).some((part) => part.lastMutationIDChanges !== undefined),
    );
    expect(await socket.next("error")).toMatchObject({
      kind: "PushFailed",
      reason: "parse",
      message: expect.stringMatching(/^mutations\[0\]\.args\[0\]\.id: .*surrogate/),
      mutationIDs: [
        { clientID: "c1", id: 1 },
        { clientID: "c1", id: 2 },
      ],
    });
    expect((await socket.closed).code).toBe(1002);
    expect(await watermark("zp14")).toBe(before);
    // Nothing was recorded: the same ids are still the next ones.
    const again = await connect("zp14", { group });
    await again.next("pokeEnd");
    again.ws.send(customPush(group, 1, { id: "well-formed" }));
    await until(() =>
      parts(again).some((part) => (part.lastMutationIDChanges as Record<string, number>)?.c1 === 1),
    );
    expect(parts(again).some((part) => part.mutationsPatch)).toBe(false);
    again.ws.close();
  });

  it("closes with 1009 on a frame past maxBodyBytes, and takes one at the limit", async () => {
    const before = await watermark("zp15");
    const socket = await connect("zp15");
    await socket.next("pokeEnd");
    // A frame of exactly the limit is taken: a ping (its padding ignored) answers pong.
    const atLimit = JSON.stringify(["ping", { pad: "x".repeat(CONFORMANCE_MAX_BODY_BYTES - 19) }]);
    expect(Buffer.byteLength(atLimit)).toBe(CONFORMANCE_MAX_BODY_BYTES);
    socket.ws.send(atLimit);
    expect(await socket.next("pong")).toEqual({});
    // Past it (in two-byte characters, so that bytes count, not characters): 1009, as the stock
    // client expects of a message too big, on which it stops instead of reconnecting.
    const big = JSON.stringify(["push", { pad: "é".repeat(CONFORMANCE_MAX_BODY_BYTES / 2) }]);
    expect(big.length).toBeLessThan(CONFORMANCE_MAX_BODY_BYTES);
    socket.ws.send(big);
    expect((await socket.closed).code).toBe(1009);
    expect(await watermark("zp15")).toBe(before);
  });

  it("answers VersionNotSupported on a sync protocol version it does not speak, and closes", async () => {
    const socket = await connect("zp4", { version: 50 });
    expect(await socket.next("error")).toMatchObject({ kind: "VersionNotSupported" });
    expect((await socket.closed).code).toBe(1002);
  });

  it("answers InvalidConnectionRequestBaseCookie for a cookie it never handed out, or one from the future", async () => {
    for (const cookie of ["abc", "9999999999999999.00000000"]) {
      const socket = await connect("zp5", { cookie });
      expect(await socket.next("error")).toMatchObject({ kind: "InvalidConnectionRequestBaseCookie" });
      expect((await socket.closed).code).toBe(1002);
    }
  });

  it("answers Unauthorized without a credential, and for a protocol header that is not Zero's encoding InvalidConnectionRequest", async () => {
    const anonymous = await connect("zp6", { protocol: secProtocol(undefined, "") });
    expect(await anonymous.next("error")).toMatchObject({ kind: "Unauthorized" });
    const garbled = await connect("zp6", { protocol: "bm90LWpzb24" });
    expect(await garbled.next("error")).toMatchObject({ kind: "InvalidConnectionRequest" });
  });

  it("answers transformError for a query the server does not define, and keeps the connection", async () => {
    const socket = await connect("zp7");
    await socket.next("pokeEnd");
    socket.ws.send(
      JSON.stringify([
        "changeDesiredQueries",
        { desiredQueriesPatch: [{ op: "put", hash: "h1", name: "nope", args: [] }] },
      ]),
    );
    expect(await socket.next("transformError")).toEqual([
      { error: "app", id: "h1", name: "nope", message: "unknown query nope" },
    ]);
    socket.ws.send(JSON.stringify(["ping", {}]));
    expect(await socket.next("pong")).toEqual({});
    socket.ws.close();
  });
}
