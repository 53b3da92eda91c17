import { conformanceConfig, connectZero, pokePartsOf, until, type ZeroTestSocket } from "@weir/conformance";
import { describe, expect, it } from "vitest";
import { memoryLogger, tempDir } from "../test/helpers.js";
import { createServer } from "./index.js";

const MAX_OPEN = 20;

const pull = (url: string, ns: string, user: string) =>
  fetch(`${url}/${ns}/pull`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: user },
    body: JSON.stringify({ clientGroupID: `g-${user}`, clientID: `c-${user}`, cookie: null }),
  });

describe("idle Zero sockets", () => {
  it("1,000 of them in as many namespaces as may be open pin none: a new namespace answers, an evicted one reopens on its socket's next message", async () => {
    const server = createServer({
      ...conformanceConfig(),
      devAuth: true,
      dataDir: tempDir(),
      logger: memoryLogger(),
      maxOpenNamespaces: MAX_OPEN,
    });
    const { url } = await server.listen();
    const sockets: ZeroTestSocket[] = [];
    try {
      // Ten users, 1,000 sockets, spread over every slot the server has.
      for (let batch = 0; batch < 10; batch++) {
        const opened = await Promise.all(
          Array.from({ length: 100 }, (_, j) => {
            const i = batch * 100 + j;
            return connectZero(url, `idle-${i % MAX_OPEN}`, { group: `g${i}`, user: `u${i % 10}` });
          }),
        );
        await Promise.all(opened.map((socket) => socket.next("connected")));
        sockets.push(...opened);
      }
      expect(server.host!.openNamespaces).toBe(MAX_OPEN);

      // Another user's new namespaces answer, while every socket stays open.
      for (let i = 0; i < MAX_OPEN + 5; i++) expect((await pull(url, `fresh-${i}`, "v")).status).toBe(200);
      expect(sockets.every((socket) => socket.ws.readyState === socket.ws.OPEN)).toBe(true);

      // A socket of an evicted namespace: its next frames reopen it, and the connection goes on.
      const push = await fetch(`${url}/idle-0/push`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: "u0" },
        body: JSON.stringify({
          clientGroupID: "g-writer",
          pushVersion: 1,
          mutations: [
            {
              type: "custom",
              id: 1,
              clientID: "writer",
              name: "createTodo",
              args: [{ id: "t1", done: true }],
            },
          ],
        }),
      });
      expect(push.status).toBe(200);
      for (let i = 0; i < MAX_OPEN; i++) expect((await pull(url, `fresh-${i}`, "v")).status).toBe(200);
      const socket = sockets[0]!;
      socket.ws.send(JSON.stringify(["ping", {}]));
      await socket.next("pong");
      socket.ws.send(
        JSON.stringify([
          "changeDesiredQueries",
          { desiredQueriesPatch: [{ op: "put", hash: "h", name: "doneTodos", args: [] }] },
        ]),
      );
      // The query's rows come in a poke of the reopened namespace.
      const rows = () =>
        pokePartsOf(socket).flatMap((part) => (part.rowsPatch as { value?: { id?: string } }[]) ?? []);
      await until(() => rows().some((row) => row.value?.id === "t1"));
      expect(socket.ws.readyState).toBe(socket.ws.OPEN);
    } finally {
      for (const socket of sockets) socket.ws.terminate();
      await server.close();
    }
  }, 180_000);
});
