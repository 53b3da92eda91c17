import { conformanceConfig, connectZero, until } from "@weir/conformance";
import { describe, expect, it } from "vitest";
import type WebSocket from "ws";
import { memoryLogger } from "../test/helpers.js";
import { createServer } from "./index.js";

const TEXT = "x".repeat(8 * 1024);
/** Unsent bytes the server must hold for the socket before the frame is sent. */
const QUEUED = 512 * 1024;

/** Unsent bytes of the server's sockets, as its metrics report them. */
async function unsentBytes(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith("weir_socket_unsent_bytes "));
  if (!line) throw new Error("no weir_socket_unsent_bytes in the metrics");
  return Number(line.split(" ")[1]);
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The server's unsent bytes once five readings in a row agree. */
async function settled(url: string): Promise<number> {
  let last = await unsentBytes(url);
  for (let same = 0; same < 5; ) {
    await pause(50);
    const now = await unsentBytes(url);
    same = now === last ? same + 1 : 0;
    last = now;
  }
  return last;
}

type RawSocket = WebSocket & { _socket: { pause(): void; resume(): void } };

describe("a Zero frame past maxBodyBytes", () => {
  // On loopback the close frame usually leaves at once; it can only be lost when it has to wait
  // behind bytes the client has not read yet, as here.
  it("closes with 1009 even when the close frame waits behind pokes the client has not read", async () => {
    const config = conformanceConfig();
    const limit = config.maxBodyBytes ?? 0;
    expect(limit).toBeGreaterThan(0);
    const server = createServer({
      ...config,
      devAuth: true,
      storage: "memory",
      logger: memoryLogger(),
      // Far above what is queued here: the socket is not closed as a slow reader (1013).
      maxSocketBufferBytes: 64 * 1024 * 1024,
    });
    const { url } = await server.listen();
    try {
      const zero = await connectZero(url, "toobig", { group: "g-toobig" });
      zero.ws.send(
        JSON.stringify([
          "changeDesiredQueries",
          { desiredQueriesPatch: [{ op: "put", hash: "h", name: "doneTodos", args: [] }] },
        ]),
      );
      await zero.next("pokeEnd");
      let closed: { code: number; reason: string } | undefined;
      void zero.closed.then((c) => {
        closed = c;
      });
      // The client stops reading; pokes of ~80 KiB (10 rows of 8 KiB its query holds) pile up
      // until the kernel's buffers are full and the server holds some unsent.
      (zero.ws as RawSocket)._socket.pause();
      let push = 0;
      while ((await unsentBytes(url)) < QUEUED) {
        push++;
        if (push > 1000) throw new Error("the server's send buffer never filled");
        const mutations = Array.from({ length: 10 }, (_, i) => ({
          type: "custom",
          id: (push - 1) * 10 + i + 1,
          clientID: "writer",
          name: "createTodo",
          args: [{ id: `t${push}-${i}`, text: TEXT, done: true }],
        }));
        const answer = await fetch(`${url}/toobig/push`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: "alice" },
          body: JSON.stringify({ clientGroupID: "g-writer", pushVersion: 1, mutations }),
        });
        expect(answer.status).toBe(200);
      }
      // Once what is queued no longer moves, a change means the server has handled the frame:
      // its close frame queued (a few bytes more), or its socket ended (none).
      const queued = await settled(url);
      zero.ws.send(JSON.stringify(["push", { pad: "x".repeat(limit) }]));
      while ((await unsentBytes(url)) === queued) await pause(10);
      // The client reads again: the pokes queued for it, then the close frame.
      (zero.ws as RawSocket)._socket.resume();
      await until(() => closed !== undefined, 30_000);
      expect(closed?.code).toBe(1009);
      expect(zero.messages.filter((m) => m[0] === "pokeEnd").length).toBeGreaterThan(1);
    } finally {
      await server.close();
    }
  }, 120_000);
});
