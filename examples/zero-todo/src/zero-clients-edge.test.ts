import { rm } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EdgeWorkerd, startEdgeWorkerd, tempDir } from "../test/edge-workerd.js";
import { queries, rowsOf, sockets, zeroClient } from "../test/zero-client.js";
import { create, lastCookie, newID, type Todo, zeroClientSuite } from "../test/zero-client-suite.js";

// The stock Zero client (1.9.0, sync protocol v51, memory store) against weir's edge host in real
// workerd (Miniflare): the Worker routes each connection to its namespace's Durable Object, which
// holds it as a hibernatable WebSocket.

let workerd: EdgeWorkerd;

beforeAll(async () => {
  workerd = await startEdgeWorkerd();
});

afterAll(async () => {
  await workerd.dispose();
});

describe("the stock Zero client on the edge", () => zeroClientSuite(() => `${workerd.url}/todo`));

describe("the stock Zero client across a restart of workerd", () => {
  it("reconnects to the restarted object with its cookie; its rows and queries carry on", async () => {
    const persistDir = tempDir();
    let first: EdgeWorkerd | undefined = await startEdgeWorkerd({ persistDir });
    const port = first.port;
    let second: EdgeWorkerd | undefined;
    const z = zeroClient(`${first.url}/todo`, "gina", { storageKey: "edge-restart" });
    try {
      const before = newID();
      expect(await create(z, { id: before, text: "Before", done: false, sort: 1 })).toEqual({
        type: "success",
      });
      await rowsOf<Todo>(z, queries.allTodos(), (rows) => rows.some((row) => row.id === before));
      const socket = sockets.findLast((s) => s.connectURL.searchParams.get("clientID") === z.clientID)!;
      const cookie = lastCookie(socket.received);
      await first.dispose();
      first = undefined;
      second = await startEdgeWorkerd({ persistDir, port });
      const after = newID();
      expect(await create(z, { id: after, text: "After", done: true, sort: 2 })).toEqual({ type: "success" });
      const rows = await rowsOf<Todo>(z, queries.allTodos(), (rows) => rows.some((row) => row.id === after));
      expect(rows.map((row) => row.id)).toEqual([before, after]);
      const reconnected = sockets.findLast((s) => s.connectURL.searchParams.get("clientID") === z.clientID)!;
      expect(reconnected).not.toBe(socket);
      expect(reconnected.connectURL.searchParams.get("baseCookie")).toBe(cookie);
    } finally {
      await z.close();
      await first?.dispose();
      await second?.dispose();
      await rm(persistDir, { recursive: true, force: true });
    }
  });
});
