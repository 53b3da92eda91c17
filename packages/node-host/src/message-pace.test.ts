import { connectZero, NativeClient } from "@weir/conformance";
import { WAKE_PACE, ZERO_PACE } from "@weir/host-core";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { conformanceServer } from "../test/conformance-server.js";

// A socket's messages are taken in at a pace on the thread every namespace shares: a client that
// floods its socket is paused and then closed with 1008, and another namespace's requests are
// answered meanwhile; a client at an ordinary pace never notices.

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

async function start() {
  const { server, url, target } = await conformanceServer();
  closers.push(() => server.close());
  return { url, target };
}

async function wakeSocket(url: string, ns: string) {
  const ws = new WebSocket(`${url.replace("http", "ws")}/${ns}/wake?clientID=c-${ns}`, {
    headers: { authorization: "mallory" },
  });
  let pongs = 0;
  ws.on("message", (data) => {
    if (String(data) === "pong") pongs++;
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on("close", (code, reason) => resolve({ code, reason: String(reason) })),
  );
  await new Promise((resolve, reject) => ws.once("open", resolve).once("error", reject));
  return { ws, closed, pongs: () => pongs };
}

/** Sends `count` copies of `message` as fast as the socket takes them, until it is no longer open. */
async function flood(ws: WebSocket, message: string, count: number): Promise<number> {
  let sent = 0;
  while (sent < count && ws.readyState === WebSocket.OPEN) {
    for (let i = 0; i < 500 && sent < count; i++, sent++) ws.send(message);
    await new Promise((resolve) => setImmediate(resolve));
  }
  return sent;
}

describe("the pace of a socket's messages", () => {
  it("closes a wake socket that floods pings with 1008, answering far fewer, while another namespace is answered", async () => {
    const { url, target } = await start();
    const victim = new NativeClient(target, "victim-ns", "victor");
    const attacker = await wakeSocket(url, "attack");
    const [sent, victimPull] = await Promise.all([flood(attacker.ws, "ping", 100_000), victim.pull()]);
    expect(victimPull.status).toBe(200);
    expect(await attacker.closed).toEqual({
      code: 1008,
      reason: "messages faster than the server takes them",
    });
    expect(sent).toBeGreaterThan(WAKE_PACE.burst * 2);
    // The burst and what the pace let in while the flood lasted; the rest went unanswered.
    expect(attacker.pongs()).toBeLessThan(sent / 2);
    expect((await victim.pull()).status).toBe(200);
  });

  it("answers every ping of a wake client at an ordinary pace", async () => {
    const { url } = await start();
    const client = await wakeSocket(url, "calm");
    for (let i = 0; i < 20; i++) {
      client.ws.send("ping");
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    await expect.poll(() => client.pongs()).toBe(20);
    expect(client.ws.readyState).toBe(WebSocket.OPEN);
    client.ws.close();
  });

  it("closes a Zero socket that floods frames with 1008, and its namespace and others stay served", async () => {
    const { url, target } = await start();
    const attacker = await connectZero(url, "attack", { user: "mallory" });
    await attacker.next("pokeEnd");
    const sent = await flood(attacker.ws, JSON.stringify(["ping", {}]), 200_000);
    expect(await attacker.closed).toEqual({
      code: 1008,
      reason: "messages faster than the server takes them",
    });
    expect(sent).toBeGreaterThan(ZERO_PACE.burst * 2);
    expect((await new NativeClient(target, "victim-ns", "victor").pull()).status).toBe(200);
    // A new socket into the same namespace is served as ever.
    const again = await connectZero(url, "attack", { user: "mallory" });
    await again.next("pokeEnd");
    again.ws.close();
  });
});
