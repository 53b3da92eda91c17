import { connectZero, wakeSocket } from "@weir/conformance";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { push, send } from "../test/client.js";
import { startWorkerd, type Workerd } from "../test/workerd.js";

// In a namespace's object, as on the Node host: a user holds at most `maxSocketsPerUser` wake and
// Zero sockets at once, and a socket that floods its messages is closed with 1008, while another
// user of the namespace is served.

async function openWake(url: string, ns: string, user: string, clientID: string): Promise<WebSocket> {
  const socket = await wakeSocket(url, ns, user, clientID);
  if (!("ws" in socket)) throw new Error(`wake refused: ${socket.status} ${socket.body}`);
  return socket.ws;
}

function close(ws: WebSocket): Promise<void> {
  return new Promise((resolve) => {
    if (ws.readyState === WebSocket.CLOSED) return resolve();
    ws.once("close", () => resolve());
    ws.close();
  });
}

const REFUSAL = "this user has 2 sockets open, the most one user may; close one to open another";

describe("a user's sockets in a namespace's object", () => {
  let w: Workerd;
  beforeAll(async () => {
    w = await startWorkerd({ bindings: { MAX_SOCKETS_PER_USER: "2" } });
  });
  afterAll(() => w.dispose());

  it("caps how many a user holds open, wake and Zero together, and another user does not notice", async () => {
    const ns = "capped";
    const held = [await openWake(w.url, ns, "mallory", "m1"), await openWake(w.url, ns, "mallory", "m2")];
    const refused = await wakeSocket(w.url, ns, "mallory", "m3");
    expect(refused).toMatchObject({ status: 429 });
    expect(JSON.parse((refused as { body: string }).body)).toEqual({
      error: "too_many_sockets",
      message: REFUSAL,
    });
    // A Zero connection past the cap reads its refusal where a Zero client reads refusals.
    const zero = await connectZero(w.url, ns, { user: "mallory" });
    expect(await zero.next("error")).toMatchObject({ kind: "ServerOverloaded", message: REFUSAL });
    expect((await zero.closed).code).not.toBe(1000);
    // Another user of the namespace opens what they may.
    const victor = await openWake(w.url, ns, "victor", "v1");
    const victorZero = await connectZero(w.url, ns, { user: "victor" });
    await victorZero.next("pokeEnd");
    // Mallory's wake sockets still hear of her writes.
    const woken = new Promise((resolve) => held[0]!.once("message", resolve));
    const pushed = await push(w.url, ns, "mallory", 1, { id: "t1", text: "x" });
    expect(pushed.status).toBe(200);
    expect(String(await woken)).toBe("wake");
    // A socket closed frees its place.
    await close(held[0]!);
    const again = await connectZero(w.url, ns, { user: "mallory" });
    await again.next("pokeEnd");
    // And that Zero socket counts: the next wake socket is refused again.
    expect(await wakeSocket(w.url, ns, "mallory", "m4")).toMatchObject({ status: 429 });
    again.ws.close();
    victorZero.ws.close();
    await Promise.all([close(held[1]!), close(victor)]);
  });

  it("closes a Zero socket that floods frames with 1008, and serves another user of its namespace", async () => {
    const ns = "flooded";
    const flood = await connectZero(w.url, ns, { user: "mallory" });
    await flood.next("pokeEnd");
    // Pings past the socket's burst (300) and as many again past its pace (100 a second).
    const ping = JSON.stringify(["ping", {}]);
    for (let i = 0; i < 1_000; i++) flood.ws.send(ping);
    expect(await flood.closed).toEqual({ code: 1008, reason: "messages faster than the server takes them" });
    const pongs = flood.messages.filter((message) => message[0] === "pong").length;
    expect(pongs).toBeLessThan(1_000);
    const pulled = await send(w.url, `/${ns}/pull`, {
      user: "victor",
      body: { clientGroupID: "g-victor", clientID: "c-victor", cookie: null },
    });
    expect(pulled.status).toBe(200);
    // Mallory's next socket is served as ever.
    const again = await connectZero(w.url, ns, { user: "mallory" });
    await again.next("pokeEnd");
    again.ws.close();
  });
});

describe("a bad maxSocketsPerUser", () => {
  let w: Workerd;
  beforeAll(async () => {
    w = await startWorkerd({ bindings: { MAX_SOCKETS_PER_USER: "0" } });
  });
  afterAll(() => w.dispose());

  it("fails every request with 500, the log saying why", async () => {
    const pulled = await send(w.url, "/bad-cap/pull", {
      user: "alice",
      body: { clientGroupID: "g-alice", clientID: "c-alice", cookie: null },
    });
    expect(pulled.status).toBe(500);
    expect(w.output.text).toContain(
      "maxSocketsPerUser: expected an integer of at least 1, or null for no cap",
    );
  });
});
