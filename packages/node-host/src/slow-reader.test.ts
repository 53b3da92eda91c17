import { conformanceConfig, connectZero, until } from "@weir/conformance";
import { describe, expect, it } from "vitest";
import type WebSocket from "ws";
import { memoryLogger } from "../test/helpers.js";
import { createServer } from "./index.js";

const BOUND = 256 * 1024;
const TEXT = "x".repeat(8 * 1024);

/** Unsent bytes of the server's sockets, as its metrics report them. */
async function unsentBytes(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith("weir_socket_unsent_bytes "));
  if (!line) throw new Error("no weir_socket_unsent_bytes in the metrics");
  return Number(line.split(" ")[1]);
}

describe("a client that stops reading", () => {
  it("has its Zero socket closed with 1013 once its unsent bytes pass the bound, which they stay near", async () => {
    const server = createServer({
      ...conformanceConfig(),
      devAuth: true,
      storage: "memory",
      logger: memoryLogger(),
      maxSocketBufferBytes: BOUND,
    });
    const { url } = await server.listen();
    try {
      const zero = await connectZero(url, "slow", { group: "g-slow" });
      zero.ws.send(
        JSON.stringify([
          "changeDesiredQueries",
          { desiredQueriesPatch: [{ op: "put", hash: "h", name: "doneTodos", args: [] }] },
        ]),
      );
      await zero.next("pokeEnd");
      // The client stops reading its socket.
      (zero.ws as WebSocket & { _socket: { pause(): void } })._socket.pause();
      let received = 0;
      let largest = 0;
      zero.ws.on("message", (data: Buffer) => {
        received += data.length;
        largest = Math.max(largest, data.length);
      });
      let closedCode: number | undefined;
      void zero.closed.then(({ code }) => {
        closedCode = code;
      });
      // Each push commits 10 rows of 8 KiB that the client's query holds: a poke of ~80 KiB.
      let sent = 0;
      let peak = 0;
      for (let push = 1; push <= 150; push++) {
        const mutations = Array.from({ length: 10 }, (_, i) => ({
          type: "custom",
          id: (push - 1) * 10 + i + 1,
          clientID: "writer",
          name: "createTodo",
          args: [{ id: `t${push}-${i}`, text: TEXT, done: true }],
        }));
        const answer = await fetch(`${url}/slow/push`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: "alice" },
          body: JSON.stringify({ clientGroupID: "g-writer", pushVersion: 1, mutations }),
        });
        expect(answer.status).toBe(200);
        sent += 10 * TEXT.length;
        if (push % 10 === 0) peak = Math.max(peak, await unsentBytes(url));
      }
      expect(peak).toBeGreaterThan(BOUND);
      // The client reads again: what the server had queued, then the close.
      (zero.ws as WebSocket & { _socket: { resume(): void } })._socket.resume();
      await until(() => closedCode !== undefined, 30_000);
      expect(closedCode).toBe(1013);
      // What the server held for the socket never passed the bound by more than one message (a
      // poke carries every commit since the last one, so under load one may hold several pushes;
      // 14 bytes is the most a frame's header takes).
      expect(peak).toBeLessThanOrEqual(BOUND + largest + 14);
      expect(received).toBeLessThan(sent / 2);
      expect(await unsentBytes(url)).toBe(0);
    } finally {
      await server.close();
    }
  }, 120_000);
});
