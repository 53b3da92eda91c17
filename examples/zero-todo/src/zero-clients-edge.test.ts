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

/** Long enough for the object's counter flush (10 s), then workerd's idle hibernation (10 s). */
const HIBERNATION_WAIT_MS = 26_000;

describe("the stock Zero client through hibernation", () => {
  it("stays connected while the object hibernates; another client's write then reaches it incrementally", async () => {
    const base = `${workerd.url}/todo`;
    const reader = zeroClient(base, "ivy", { storageKey: "hibernation-reader" });
    let writer: ReturnType<typeof zeroClient> | undefined;
    const view = reader.materialize(queries.allTodos());
    try {
      const first = newID();
      expect(await create(reader, { id: first, text: "Before", done: false, sort: 1 })).toEqual({
        type: "success",
      });
      await rowsOf<Todo>(reader, queries.allTodos(), (rows) => rows.some((row) => row.id === first));
      const socket = sockets.findLast((s) => s.connectURL.searchParams.get("clientID") === reader.clientID)!;
      const before = await instance();
      // Only the client's keepalives meanwhile, which the platform answers (`autoResponse: "zero"`).
      await new Promise((resolve) => setTimeout(resolve, HIBERNATION_WAIT_MS));
      // Read once all is quiet (a poke may still have been under way a moment ago).
      const seen = socket.received.length;
      const cookie = lastCookie(socket.received);
      writer = zeroClient(base, "ivy", { storageKey: "hibernation-writer" });
      const second = newID();
      expect(await create(writer, { id: second, text: "After", done: false, sort: 2 })).toEqual({
        type: "success",
      });
      const rows = await rowsOf<Todo>(reader, queries.allTodos(), (rows) =>
        rows.some((row) => row.id === second),
      );
      expect(rows.map((row) => row.id)).toEqual([first, second]);
      // A new instance answered (the object hibernated), on the socket the client had all along.
      expect(await instance()).not.toBe(before);
      expect(sockets.findLast((s) => s.connectURL.searchParams.get("clientID") === reader.clientID)).toBe(
        socket,
      );
      const after = socket.received.slice(seen);
      const start = after.find((frame) => frame[0] === "pokeStart")![1] as { baseCookie: string };
      expect(start.baseCookie).toBe(cookie);
      expect(JSON.stringify(after)).not.toContain('"op":"clear"');
    } finally {
      view.destroy();
      await reader.close();
      await writer?.close();
    }
  });
});

async function instance(): Promise<string> {
  const response = await fetch(`${workerd.url}/__instance/todo`);
  return ((await response.json()) as { instance: string }).instance;
}

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
