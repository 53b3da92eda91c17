import { afterEach, describe, expect, it, vi } from "vitest";
import { testService } from "../../test/test-host.js";
import { config, connectAlice, recorder, settle } from "../../test/zero-hub-fixtures.js";
import type { NamespaceService } from "../namespace/namespace-service.js";
import { MAX_WAITING_FRAMES } from "./zero-connection.js";

const services: NamespaceService[] = [];
afterEach(() => {
  for (const service of services.splice(0)) service.close();
});

/** Alice's connection, settled, with the kinds of the frames it sends from then on, in order. */
async function connectedInOrder() {
  const { service } = await testService(config);
  services.push(service);
  const socket = recorder();
  const connection = connectAlice(service.zero, socket, { baseCookie: null, wsid: "w1", queries: [] });
  await settle();
  const order: string[] = [];
  const sent = socket.send;
  socket.send = (frame: string) => {
    order.push(JSON.parse(frame)[0]);
    sent(frame);
  };
  return { socket, connection, order };
}

describe("ZeroConnection's frames waiting to be handled", () => {
  it("are bounded: a client that sends more at once than the bound is closed with ServerOverloaded", async () => {
    const { service } = await testService(config);
    services.push(service);
    const socket = recorder();
    const closes: Array<{ code: number; reason: string }> = [];
    socket.close = (code: number, reason: string) => closes.push({ code, reason });
    const connection = connectAlice(service.zero, socket, { baseCookie: null, wsid: "w1", queries: [] });
    await settle();
    // Frames read in one go wait for each other; past the bound the socket is closed, and none
    // of those waiting is handled.
    for (let i = 0; i <= MAX_WAITING_FRAMES; i++) connection.receive(JSON.stringify(["ping", {}]));
    await settle();
    expect(closes).toEqual([{ code: 1002, reason: "ServerOverloaded" }]);
    expect(socket.frames.find((f) => f[0] === "error")?.[1]).toMatchObject({ kind: "ServerOverloaded" });
    expect(socket.frames.filter((f) => f[0] === "pong")).toHaveLength(0);
    expect(connection.isOpen).toBe(false);
  });

  it("below the bound are all handled, in order", async () => {
    const { service } = await testService(config);
    services.push(service);
    const socket = recorder();
    const connection = connectAlice(service.zero, socket, { baseCookie: null, wsid: "w1", queries: [] });
    await settle();
    for (let i = 0; i < MAX_WAITING_FRAMES; i++) connection.receive(JSON.stringify(["ping", {}]));
    // Frames read together give the event loop turns between them: wait until none is left.
    for (let seen = -1; seen !== socket.frames.length; ) {
      seen = socket.frames.length;
      await settle();
    }
    expect(socket.frames.filter((f) => f[0] === "pong")).toHaveLength(MAX_WAITING_FRAMES);
    expect(connection.isOpen).toBe(true);
  });

  it("a large one is parsed in slices: what else waits runs before it is answered", async () => {
    const { socket, connection, order } = await connectedInOrder();
    // About 300 KB (a ping's body may carry anything): parsed in slices.
    const pad = Array.from({ length: 10_000 }, (_, i) => `${"x".repeat(24)}${i}`);
    connection.receive(JSON.stringify(["ping", { pad }]));
    setTimeout(() => order.push("another task"), 0);
    for (let turns = 0; turns < 1000 && !order.includes("pong"); turns++) await settle();
    expect(order.indexOf("another task")).toBe(0);
    expect(order).toContain("pong");
    expect(socket.frames.filter((f) => f[0] === "error")).toEqual([]);
    expect(connection.isOpen).toBe(true);
  });

  it("read together give what else waits its turn once they have taken 5 ms, not after all of them", async () => {
    const { connection, order } = await connectedInOrder();
    // A clock that moves 3 ms each time it is read: each frame takes 3 ms to handle.
    let clock = 0;
    const now = vi.spyOn(performance, "now").mockImplementation(() => (clock += 3));
    try {
      for (let i = 0; i < 4; i++) connection.receive(JSON.stringify(["ping", {}]));
      setTimeout(() => order.push("another task"), 0);
      for (let turns = 0; turns < 100 && order.filter((f) => f === "pong").length < 4; turns++)
        await settle();
    } finally {
      now.mockRestore();
    }
    // Two frames (6 ms), then the turn, then the other two.
    expect(order).toEqual(["pong", "pong", "another task", "pong", "pong"]);
  });
});
