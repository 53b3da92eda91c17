import { fileURLToPath } from "node:url";
import { connectZero, type OpenWake, wakeSocket as wakeSocketOf } from "@weir/conformance";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { conformanceServer } from "../test/conformance-server.js";
import { tempDir } from "../test/helpers.js";
import type { NodeHostOptions } from "./index.js";

// Every wake and Zero socket of a user counts toward one cap and shares one pace, whatever its
// namespace: opening more sockets buys a user no more of the thread that holds them all, and
// another user does not notice.

const WORKER_CONFIG = fileURLToPath(
  new URL("../test/fixtures/conformance-worker-config.mjs", import.meta.url),
);

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

/** A conformance server; with workers, each loads the suite's config (the header is the user, as here). */
async function start(options: Partial<NodeHostOptions>, workers: number) {
  const dataDir = tempDir();
  const { server, url } = await conformanceServer({
    dataDir,
    ...(workers > 0
      ? { workers, workerConfig: { module: WORKER_CONFIG, argument: { storage: "file", dataDir } } }
      : {}),
    ...options,
  });
  closers.push(() => server.close());
  return url;
}

type Wake = OpenWake;

/** A wake socket of `user` into `ns`: open, or the status and body of its refused upgrade. */
function wakeSocket(url: string, ns: string, user: string) {
  return wakeSocketOf(url, ns, user, `c-${ns}-${user}`);
}

async function openWake(url: string, ns: string, user: string): Promise<Wake> {
  const socket = await wakeSocket(url, ns, user);
  if (!("ws" in socket)) throw new Error(`wake refused: ${socket.status} ${socket.body}`);
  return socket;
}

async function closeAll(sockets: Wake[]): Promise<void> {
  await Promise.all(
    sockets.map(
      ({ ws }) =>
        new Promise((resolve) => {
          ws.once("close", resolve);
          ws.close();
        }),
    ),
  );
}

describe.each([0, 2])("a user's sockets (%i workers)", (workers) => {
  it("caps how many a user holds open, wake and Zero together, and no other user notices", async () => {
    const url = await start({ maxSocketsPerUser: 3 }, workers);
    const held = [
      await openWake(url, "a", "mallory"),
      await openWake(url, "b", "mallory"),
      await openWake(url, "c", "mallory"),
    ];
    const refused = await wakeSocket(url, "d", "mallory");
    expect(refused).toMatchObject({ status: 429 });
    expect(JSON.parse((refused as { body: string }).body)).toEqual({
      error: "too_many_sockets",
      message: "this user has 3 sockets open, the most one user may; close one to open another",
    });
    // A Zero connection past the cap reads its refusal where a Zero client reads refusals.
    const zero = await connectZero(url, "e", { user: "mallory" });
    expect(await zero.next("error")).toMatchObject({
      kind: "ServerOverloaded",
      message: "this user has 3 sockets open, the most one user may; close one to open another",
    });
    expect((await zero.closed).code).not.toBe(1000);
    // Another user opens what they like.
    const victor = [await openWake(url, "a", "victor"), await openWake(url, "d", "victor")];
    const victorZero = await connectZero(url, "e", { user: "victor" });
    await victorZero.next("pokeEnd");
    // Both refusals are counted for the server's operator.
    const metrics = () => fetch(`${url}/metrics`).then((answer) => answer.text());
    expect(await metrics()).toMatch(/^weir_socket_refusals_total\{cap="user"\} 2$/m);
    expect(await metrics()).toMatch(/^weir_socket_refusals_total\{cap="server"\} 0$/m);
    await expect.poll(metrics).toMatch(/^weir_zero_sockets 1$/m);
    // A socket closed frees its place.
    await closeAll(held.slice(0, 1));
    const again = await connectZero(url, "e", { user: "mallory" });
    await again.next("pokeEnd");
    again.ws.close();
    victorZero.ws.close();
    await closeAll([...held.slice(1), ...victor]);
  });

  it("caps the sockets the server holds, of every user, and requests are answered past it", async () => {
    const url = await start({ maxSockets: 3 }, workers);
    const held = [
      await openWake(url, "a", "ann"),
      await openWake(url, "b", "ben"),
      await openWake(url, "c", "cat"),
    ];
    const refused = await wakeSocket(url, "d", "dan");
    expect(refused).toMatchObject({ status: 503 });
    expect(JSON.parse((refused as { body: string }).body)).toEqual({
      error: "server_busy",
      message: "the server holds 3 sockets, as many as it may; try again later",
    });
    const zero = await connectZero(url, "e", { user: "eve" });
    expect(await zero.next("error")).toMatchObject({ kind: "ServerOverloaded", minBackoffMs: 5_000 });
    // Requests are not sockets: they are answered.
    const pull = await fetch(`${url}/d/pull`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "dan" },
      body: JSON.stringify({ clientGroupID: "g-dan", clientID: "c-dan", cookie: null }),
    });
    expect(pull.status).toBe(200);
    await closeAll(held.slice(0, 1));
    held[0] = await openWake(url, "d", "dan");
    await closeAll(held);
  });

  it("takes a user's messages in at one pace over all their sockets, another user's at their own", async () => {
    const perSecond = 20;
    const url = await start({ userMessagesPerSecond: perSecond }, workers);
    const mallory = await Promise.all(
      Array.from({ length: 10 }, (_, i) => openWake(url, `m${i}`, "mallory")),
    );
    const victor = await openWake(url, "m0", "victor");
    // Each socket pings at 10 a second, within its own pace; together they send 100 a second,
    // five times their user's.
    const started = performance.now();
    let sent = 0;
    for (let round = 0; round < 30; round++) {
      for (const { ws } of mallory) {
        if (ws.readyState !== WebSocket.OPEN) continue;
        ws.send("ping");
        sent++;
      }
      victor.ws.send("ping");
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const seconds = (performance.now() - started) / 1000;
    const answered = mallory.reduce((total, socket) => total + socket.pongs(), 0);
    // The user's burst (five seconds of their pace) and their pace since: the rest waits or is dropped.
    expect(sent).toBe(300);
    expect(answered).toBeLessThanOrEqual(perSecond * 5 + perSecond * (seconds + 1));
    await expect.poll(() => victor.pongs()).toBe(30);
    await closeAll([...mallory, victor]);
  });
});
