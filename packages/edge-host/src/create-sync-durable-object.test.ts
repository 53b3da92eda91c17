import { NativeClient } from "@weir/conformance";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { ADMIN, eventually, push, rows, send } from "../test/client.js";
import { startWorkerd, tempDir, type Workerd } from "../test/workerd.js";

function openSocket(url: string, ns: string, clientID: string, user: string): Promise<WebSocket> {
  const ws = new WebSocket(`${url.replace(/^http/, "ws")}/${ns}/wake?clientID=${clientID}`, {
    headers: { authorization: user },
  });
  return new Promise((resolve, reject) => {
    ws.once("open", () => resolve(ws));
    ws.once("error", reject);
  });
}

function nextMessage(ws: WebSocket): Promise<string> {
  return new Promise((resolve) => ws.once("message", (data) => resolve(data.toString())));
}

describe("the sync Durable Object in workerd", () => {
  it("keeps data, knobs and counters across a restart on the same storage", async () => {
    const persistDir = tempDir();
    let w = await startWorkerd({ persistDir });
    try {
      expect((await push(w.url, "keep", "alice", 1, { id: "t1", text: "kept" })).status).toBe(200);
      expect((await push(w.url, "keep", "alice", 2, { id: "t2" })).status).toBe(200);
      await send(w.url, "/keep/admin/retention", { headers: ADMIN, body: { retainChanges: 5 } });
      await send(w.url, "/keep/admin/visibility", { headers: ADMIN, body: { enabled: false } });
      await send(w.url, "/keep/admin/fault", {
        headers: ADMIN,
        body: { point: "pull_during_tx", kind: "error" },
      });
      const before = (await send(w.url, "/keep/admin/status", { headers: ADMIN })).json;
      await w.dispose();

      w = await startWorkerd({ persistDir });
      const after = (await send(w.url, "/keep/admin/status", { headers: ADMIN })).json;
      expect(after).toMatchObject({
        retainChanges: 5,
        visibility: { enabled: false },
        faults: { pull_during_tx: "error" },
      });
      expect(after.engine).toEqual(before.engine);
      expect(after.counters.pushes).toBe(2);
      expect(after.counters.mutations).toBe(2);
      // The armed fault fires once, then the data is there as it was.
      expect(
        (
          await send(w.url, "/keep/pull", {
            user: "bob",
            body: { clientGroupID: "g-bob", clientID: "c-bob", cookie: null },
          })
        ).status,
      ).toBe(500);
      const kept = await rows(w.url, "keep", "bob");
      expect(kept.map((row) => [row.id, row.text, row.owner])).toEqual([
        ["t1", "kept", "alice"],
        ["t2", "", "alice"],
      ]);
      // Mutation ids continue where they were.
      const replay = await push(w.url, "keep", "alice", 2, { id: "t2" });
      expect(replay.json.pushResponse.mutations[0].result).toMatchObject({ error: "alreadyProcessed" });
    } finally {
      await w.dispose();
    }
  });

  it("keeps namespaces apart: own objects, own rows, own knobs", async () => {
    const w = await startWorkerd();
    try {
      await push(w.url, "iso-a", "alice", 1, { id: "only-a" });
      await push(w.url, "iso-b", "alice", 1, { id: "only-b" });
      await send(w.url, "/iso-a/admin/writer", { headers: ADMIN, body: { enabled: false } });
      expect((await rows(w.url, "iso-a", "alice")).map((row) => row.id)).toEqual(["only-a"]);
      expect((await rows(w.url, "iso-b", "alice")).map((row) => row.id)).toEqual(["only-b"]);
      expect((await push(w.url, "iso-a", "alice", 2, { id: "a2" })).status).toBe(503);
      expect((await push(w.url, "iso-b", "alice", 2, { id: "b2" })).status).toBe(200);
      const a = (await send(w.url, "/iso-a/admin/status", { headers: ADMIN })).json;
      const b = (await send(w.url, "/iso-b/admin/status", { headers: ADMIN })).json;
      expect(a.engine.watermark).toBe(1);
      expect(b.engine.watermark).toBe(2);
      expect(b.writer.enabled).toBe(true);
      // A client group claimed in one namespace is free in the other.
      expect((await rows(w.url, "iso-b", "alice")).length).toBe(2);
    } finally {
      await w.dispose();
    }
  });

  it("runs the alarm task, whose writes pull and wake like any other", async () => {
    const persistDir = tempDir();
    const w = await startWorkerd({ persistDir });
    try {
      // Writes 500 ms apart: the watcher syncs before most of them and then pulls from its cookie.
      const ns = "ticks-slow-watched";
      const ws = await openSocket(`${w.url}/alarmed`, ns, "watcher", "alarm");
      const target = { url: `${w.url}/alarmed`, auth: (user: string) => user, close: async () => {} };
      const watcher = new NativeClient(target, ns, "alarm");
      await watcher.sync();
      const before = watcher.rows.size;
      const woken = nextMessage(ws);
      expect((await push(w.url, `alarmed/${ns}`, "alice", 1, { id: "start" })).status).toBe(200);
      expect(await woken).toBe("wake");
      await eventually(async () => {
        await watcher.sync();
        return watcher.rows.size === 3;
      });
      expect(before).toBeLessThan(3);
      expect([...watcher.rows.values()].map((row) => row.id)).toEqual(["tick-1", "tick-2", "tick-3"]);
      ws.close();
    } finally {
      await w.dispose();
    }
  });

  it("keeps the alarm across a restart: a new instance knows its namespace and runs the rest", async () => {
    const persistDir = tempDir();
    let w = await startWorkerd({ persistDir });
    try {
      expect((await push(w.url, "alarmed/ticks-slow", "alice", 1, { id: "start" })).status).toBe(200);
      await eventually(async () => (await rows(w.url, "alarmed/ticks-slow", "alarm")).length >= 1);
      await w.dispose();
      // Only the alarm set before the restart can write the remaining rows: nothing sets it again.
      w = await startWorkerd({ persistDir });
      await eventually(async () => (await rows(w.url, "alarmed/ticks-slow", "alarm")).length === 3);
    } finally {
      await w.dispose();
    }
  });

  describe("wake sockets", () => {
    let w: Workerd;
    beforeAll(async () => {
      w = await startWorkerd();
    });
    afterAll(() => w.dispose());

    it("answers ping, and takes every way a client leaves (1000, 1001, 4000, no code, dropped) without an error", async () => {
      const ns = "closing";
      const staying = await openSocket(w.url, ns, "stays", "alice");
      const pong = nextMessage(staying);
      staying.send("ping");
      expect(await pong).toBe("pong");

      const leaving = await Promise.all(
        ["a", "b", "c", "d", "e"].map((id) => openSocket(w.url, ns, `leaves-${id}`, "alice")),
      );
      const status = async () => (await send(w.url, `/${ns}/admin/status`, { headers: ADMIN })).json;
      await eventually(async () => (await status()).wakeSockets === 6);
      const [normal, away, custom, noCode, dropped] = leaving as [
        WebSocket,
        WebSocket,
        WebSocket,
        WebSocket,
        WebSocket,
      ];
      normal.close(1000);
      away.close(1001);
      custom.close(4000, "bye");
      noCode.close();
      dropped.terminate();
      await eventually(async () => (await status()).wakeSockets === 1);

      const woken = nextMessage(staying);
      // Alice writes from another client: her socket that stayed hears of it.
      expect((await push(w.url, ns, "alice", 1, { id: "t1" })).status).toBe(200);
      expect(await woken).toBe("wake");
      expect(w.output.text).not.toMatch(/Uncaught|close code|"level":"error"/i);
      staying.close();
    });

    it("coalesces commits in a window into one wake per socket", async () => {
      // The alarmed object's window is a second: the first commit wakes at once, the others once more.
      const base = `${w.url}/alarmed`;
      const listener = await openSocket(base, "coalesce", "listener", "bob");
      const heard: string[] = [];
      listener.on("message", (data) => heard.push(data.toString()));
      // Items are every user's to see: each writer's commit concerns the listener.
      const putItem = (i: number) => push(base, "coalesce", `writer${i}`, 1, { a: `t${i}`, b: i }, "putItem");
      await putItem(0);
      await eventually(async () => heard.length === 1);
      await Promise.all([1, 2, 3, 4].map(putItem));
      await eventually(async () => heard.length === 2);
      const status = (await send(base, "/coalesce/admin/status", { headers: ADMIN })).json;
      expect(status.counters.pushes).toBe(5);
      expect(status.counters.wakeFrames).toBe(2);
      expect(heard).toEqual(["wake", "wake"]);
      listener.close();
    });
  });
});
