import { fileURLToPath } from "node:url";
import { MessageChannel, type MessagePort, threadId } from "node:worker_threads";
import { conformanceConfig, until } from "@weir/conformance";
import { describe, expect, it } from "vitest";
import { memoryLogger, tempDir } from "../test/helpers.js";
import { createServer } from "./index.js";
import { namespaceWorker } from "./worker-pool.js";

const GATED_CONFIG = fileURLToPath(new URL("../test/fixtures/gated-worker-config.mjs", import.meta.url));
const PORTED_CONFIG = fileURLToPath(new URL("../test/fixtures/ported-worker-config.mjs", import.meta.url));

const post = (url: string, body: unknown) =>
  fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "alice" },
    body: JSON.stringify(body),
  });

/** A namespace name the pool of `workers` puts in worker `index`. */
function namespaceIn(index: number, workers: number, prefix: string): string {
  for (let i = 0; ; i++) if (namespaceWorker(`${prefix}-${i}`, workers) === index) return `${prefix}-${i}`;
}

/** A server of `workers` threads, each loading the gated fixture, its data in files. */
function gatedServer(workers: number, gate: SharedArrayBuffer) {
  const dataDir = tempDir();
  return createServer({
    ...conformanceConfig(),
    devAuth: true,
    dataDir,
    logger: memoryLogger(),
    workers,
    workerConfig: { module: GATED_CONFIG, argument: { gate, storage: "file", dataDir } },
  });
}

describe("worker threads", () => {
  it("a namespace stuck in work delays only its own worker: another worker's namespace answers meanwhile", async () => {
    const gate = new SharedArrayBuffer(8);
    const cells = new Int32Array(gate);
    const server = gatedServer(2, gate);
    const { url } = await server.listen();
    const busy = namespaceIn(0, 2, "busy");
    const other = namespaceIn(1, 2, "other");
    try {
      let held: Response | undefined;
      const holding = post(`${url}/${busy}/push`, {
        clientGroupID: "g-busy",
        pushVersion: 1,
        mutations: [{ type: "custom", id: 1, clientID: "c-busy", name: "hold", args: [{}] }],
      }).then((response) => {
        held = response;
        return response;
      });
      // The mutator is running: its worker is stuck until the gate opens.
      await until(() => Atomics.load(cells, 1) === 1);

      const push = await post(`${url}/${other}/push`, {
        clientGroupID: "g-other",
        pushVersion: 1,
        mutations: [{ type: "custom", id: 1, clientID: "c-other", name: "createTodo", args: [{ id: "t1" }] }],
      });
      expect(push.status).toBe(200);
      const pull = await post(`${url}/${other}/pull`, {
        clientGroupID: "g-other",
        clientID: "c-other",
        cookie: null,
      });
      expect(await pull.json()).toMatchObject({
        lastMutationIDChanges: { "c-other": 1 },
        rowsPatch: [{ op: "clear" }, { op: "put", tableName: "todo", value: { id: "t1" } }],
      });
      // Both answered while the other namespace's push is still held.
      expect(held).toBeUndefined();
      expect(Atomics.load(cells, 0)).toBe(0);

      Atomics.store(cells, 0, 1);
      Atomics.notify(cells, 0);
      expect((await holding).status).toBe(200);
    } finally {
      Atomics.store(cells, 0, 1);
      Atomics.notify(cells, 0);
      await server.close();
    }
  });

  it("a large answer (sent from the worker as bytes) arrives whole, its length and characters exact", async () => {
    const server = gatedServer(1, new SharedArrayBuffer(8));
    const { url } = await server.listen();
    // Characters of one to four UTF-8 bytes, so that bytes and characters differ.
    const text = (i: number) => `todo ${i}: déjà vu, 東京, 🌊 `.repeat(8);
    try {
      const mutations = Array.from({ length: 600 }, (_, i) => ({
        type: "custom",
        id: i + 1,
        clientID: "c1",
        name: "createTodo",
        args: [{ id: `t${String(i).padStart(3, "0")}`, text: text(i) }],
      }));
      expect((await post(`${url}/big/push`, { clientGroupID: "g1", pushVersion: 1, mutations })).status).toBe(
        200,
      );
      const pull = await post(`${url}/big/pull`, { clientGroupID: "g1", clientID: "c1", cookie: null });
      expect(pull.status).toBe(200);
      const bytes = new Uint8Array(await pull.arrayBuffer());
      // Past the size the worker sends as bytes, and exactly as long as its header says.
      expect(bytes.length).toBeGreaterThan(128 * 1024);
      expect(Number(pull.headers.get("content-length"))).toBe(bytes.length);
      const answer = JSON.parse(new TextDecoder().decode(bytes)) as {
        rowsPatch: Array<{ op: string; value?: { id: string; text: string } }>;
      };
      const puts = answer.rowsPatch.filter((op) => op.op === "put");
      expect(puts).toHaveLength(600);
      for (const [i, put] of puts.entries()) expect(put.value).toMatchObject({ text: text(i) });
      // A small answer still arrives as text.
      const small = await post(`${url}/small/pull`, { clientGroupID: "g2", clientID: "c2", cookie: null });
      expect(await small.json()).toMatchObject({ rowsPatch: [{ op: "clear" }] });
    } finally {
      await server.close();
    }
  });

  it("gives each worker the ports workerConfig.ports makes for it, moved to that thread", async () => {
    const dataDir = tempDir();
    const loaded: number[] = [];
    const made: MessagePort[] = [];
    const server = createServer({
      ...conformanceConfig(),
      devAuth: true,
      dataDir,
      logger: memoryLogger(),
      workers: 2,
      workerConfig: {
        module: PORTED_CONFIG,
        argument: { dataDir },
        ports() {
          const { port1, port2 } = new MessageChannel();
          port1.on("message", (message: { loadedIn: number }) => loaded.push(message.loadedIn));
          made.push(port1);
          return { probe: port2 };
        },
      },
    });
    try {
      await server.listen();
      await until(() => loaded.length === 2);
      // One port each, and each heard from another thread.
      expect(made).toHaveLength(2);
      expect(new Set(loaded).size).toBe(2);
      expect(loaded).not.toContain(threadId);
    } finally {
      for (const port of made) port.close();
      await server.close();
    }
  });

  it("a worker config that throws: listen rejects with its message, and close still ends", async () => {
    const server = createServer({
      ...conformanceConfig(),
      devAuth: true,
      dataDir: tempDir(),
      logger: memoryLogger(),
      workers: 2,
      workerConfig: {
        module: PORTED_CONFIG,
        argument: { fail: true },
        ports: () => ({ probe: new MessageChannel().port2 }),
      },
    });
    await expect(server.listen()).rejects.toThrow(/the config module failed to load/);
    await server.close();
  });

  it("refuses a workerConfig.ports that is not a function", () => {
    expect(() =>
      createServer({
        ...conformanceConfig(),
        devAuth: true,
        workers: 1,
        workerConfig: { module: PORTED_CONFIG, ports: {} as unknown as () => Record<string, MessagePort> },
      }),
    ).toThrow(/workerConfig\.ports: expected a function/);
  });
});
