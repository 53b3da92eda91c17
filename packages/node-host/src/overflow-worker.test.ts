import { fileURLToPath } from "node:url";
import { conformanceConfig, connectZero, Listener, until, wakeUrl } from "@weir/conformance";
import { afterEach, describe, expect, it } from "vitest";
import { memoryLogger, tempDir } from "../test/helpers.js";
import { createServer, type NodeHostOptions } from "./index.js";
import { CLOSE_MOVED, namespaceWorker } from "./worker-pool.js";

// A namespace whose steps hold its worker past the step budget moves to the overflow worker, so
// that its long steps delay only namespaces that did the same, and moves back once quiet. The
// steps are the gated fixture's `hold` mutator: its push holds the worker until the test opens
// the gate, which makes a step as long as the test wants it.

const GATED_CONFIG = fileURLToPath(new URL("../test/fixtures/gated-worker-config.mjs", import.meta.url));

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

async function start(options: Partial<NodeHostOptions>) {
  const gate = new SharedArrayBuffer(8);
  const cells = new Int32Array(gate);
  const dataDir = tempDir();
  const logger = memoryLogger();
  const server = createServer({
    ...conformanceConfig(),
    devAuth: true,
    dataDir,
    logger,
    workers: 1,
    workerConfig: { module: GATED_CONFIG, argument: { gate, storage: "file", dataDir } },
    stepBudgetMs: STEP_BUDGET_MS,
    ...options,
  });
  const { url } = await server.listen();
  const open = () => {
    Atomics.store(cells, 0, 1);
    Atomics.notify(cells, 0);
  };
  closers.push(async () => {
    open();
    await server.close();
  });
  const mutationIDs = new Map<string, number>();
  const push = (ns: string, name: string, args: unknown, clientID = "c1") => {
    const id = (mutationIDs.get(`${ns}/${clientID}`) ?? 0) + 1;
    mutationIDs.set(`${ns}/${clientID}`, id);
    return fetch(`${url}/${ns}/push`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "alice" },
      body: JSON.stringify({
        clientGroupID: `g-${clientID}`,
        pushVersion: 1,
        mutations: [{ type: "custom", id, clientID, name, args: [args] }],
      }),
    });
  };
  /** A push of `hold` whose step lasts until `release` is called (at least the time until then). */
  const hold = async (ns: string) => {
    Atomics.store(cells, 0, 0);
    Atomics.store(cells, 1, 0);
    const answered = push(ns, "hold", {});
    await until(() => Atomics.load(cells, 1) === 1);
    return { answered, release: open, held: () => Atomics.load(cells, 0) === 0 };
  };
  const pull = async (ns: string, clientID = "c1") => {
    const response = await fetch(`${url}/${ns}/pull`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "alice" },
      body: JSON.stringify({ clientGroupID: `g-${clientID}`, clientID, cookie: null }),
    });
    expect(response.status).toBe(200);
    return (await response.json()) as { rowsPatch: Array<{ op: string; value?: { id: string } }> };
  };
  const overflowGauge = async () => {
    const text = await (await fetch(`${url}/metrics`)).text();
    return Number(/^weir_overflow_namespaces (\d+)/m.exec(text)?.[1]);
  };
  const moves = () => logger.lines.filter((line) => String(line.msg).startsWith("namespace moved"));
  return { url, push, hold, pull, overflowGauge, moves };
}

/**
 * The step budget of these tests: far above what an ordinary step (a namespace's first open
 * included) takes even on a busy machine, so that only the steps the tests make long count.
 */
const STEP_BUDGET_MS = 250;
/** A step held past the budget: the test waits this long before opening the gate. */
const LONG_STEP_MS = 400;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("the overflow worker", () => {
  it("moves a namespace whose steps pass the budget twice, keeps its data, wakes and clients, and isolates it", async () => {
    const server = await start({ overflowQuietMs: 60_000 });
    const heavy = "heavy";
    const quiet = "quiet";
    expect(namespaceWorker(heavy, 1)).toBe(namespaceWorker(quiet, 1));
    expect((await server.push(heavy, "createTodo", { id: "t1" })).status).toBe(200);
    const target = { url: server.url, auth: (user: string) => user, close: async () => {} };
    const listener = new Listener(wakeUrl(target, heavy, "c-wake"), "alice");
    await listener.opened;
    const zero = await connectZero(server.url, heavy);
    await zero.next("connected");
    closers.push(async () => zero.ws.close());

    // One long step moves nothing: a pause of the machine's would look the same.
    const first = await server.hold(heavy);
    await sleep(LONG_STEP_MS);
    first.release();
    expect((await first.answered).status).toBe(200);
    expect(await server.overflowGauge()).toBe(0);

    const second = await server.hold(heavy);
    await sleep(LONG_STEP_MS);
    second.release();
    expect((await second.answered).status).toBe(200);
    await until(() => server.moves().length === 1);
    expect(server.moves()[0]).toMatchObject({ msg: "namespace moved to the overflow worker" });
    expect(server.moves()[0]!.stepMs).toBeGreaterThan(STEP_BUDGET_MS);
    expect(server.moves()[0]!.moveMs).toBeGreaterThanOrEqual(0);
    expect(await server.overflowGauge()).toBe(1);

    // Its Zero socket was closed for the client to reconnect, and a new one is served.
    expect((await zero.closed).code).toBe(CLOSE_MOVED);
    const again = await connectZero(server.url, heavy);
    await again.next("connected");
    again.ws.close();

    // Its rows are all there, its wake socket still hears of its writes.
    expect((await server.pull(heavy)).rowsPatch.filter((op) => op.op === "put")).toHaveLength(1);
    expect((await server.push(heavy, "createTodo", { id: "t2" }, "c2")).status).toBe(200);
    expect(await listener.next()).toBe("wake");

    // Now a step of it holding the overflow worker delays no namespace of its own worker.
    const third = await server.hold(heavy);
    expect((await server.push(quiet, "createTodo", { id: "q1" })).status).toBe(200);
    expect((await server.pull(quiet)).rowsPatch).toEqual([
      { op: "clear" },
      expect.objectContaining({ op: "put", value: expect.objectContaining({ id: "q1" }) }),
    ]);
    expect(third.held()).toBe(true);
    third.release();
    expect((await third.answered).status).toBe(200);
    listener.ws.close();
  });

  it("moves a namespace whose queries the work budget stopped twice, and its worker's others are answered", async () => {
    // No step of these passes a step budget this high: only the queries stopped past their work
    // budget (queryBudgetMs, 50 ms) count.
    const server = await start({ stepBudgetMs: 60_000, overflowQuietMs: 60_000 });
    const heavy = "stopped";
    const quiet = "neighbour";
    expect(namespaceWorker(heavy, 1)).toBe(namespaceWorker(quiet, 1));
    expect((await server.push(heavy, "seedTodos", { count: 2_000 })).status).toBe(200);
    const put = async (group: string) => {
      const response = await fetch(`${server.url}/${heavy}/pull`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: "alice" },
        body: JSON.stringify({
          clientGroupID: group,
          clientID: `${group}-c`,
          cookie: null,
          queries: { patch: [{ op: "put", hash: "w", name: "sameOwnerLike", args: ["%zzz%"] }] },
        }),
      });
      return { status: response.status, json: (await response.json()) as { error?: string } };
    };
    // 2,000 todos, each a read of the 2,000 for its witnesses: stopped each time.
    expect(await put("g1")).toMatchObject({ status: 422, json: { error: "query_budget_exceeded" } });
    expect(await server.overflowGauge()).toBe(0);
    expect(await put("g2")).toMatchObject({ status: 422, json: { error: "query_budget_exceeded" } });
    await until(() => server.moves().length === 1);
    expect(server.moves()[0]).toMatchObject({ msg: "namespace moved to the overflow worker" });
    expect(await server.overflowGauge()).toBe(1);
    // Its worker's other namespaces are answered as before.
    expect((await server.push(quiet, "createTodo", { id: "q1" })).status).toBe(200);
    expect((await server.pull(quiet)).rowsPatch).toHaveLength(2);
  });

  it("moves a namespace whose steps, each within the budget, keep its worker busy while a neighbour steps", async () => {
    const server = await start({ overflowQuietMs: 60_000 });
    const heavy = "busy";
    const quiet = "beside";
    expect(namespaceWorker(heavy, 1)).toBe(namespaceWorker(quiet, 1));
    let moved = false;
    // Steps of 100 ms, under the 250 ms budget, one after another: the worker is busy with them
    // nearly all the time, while the neighbour writes every 50 ms.
    const spins = (async () => {
      for (let i = 0; !moved && i < 200; i++)
        expect((await server.push(heavy, "spin", { ms: 100 })).status).toBe(200);
    })();
    const writes = (async () => {
      for (let i = 0; !moved && i < 400; i++) {
        expect((await server.push(quiet, "createTodo", { id: `q${i}` })).status).toBe(200);
        await sleep(50);
      }
    })();
    await until(() => server.moves().length === 1, 20_000);
    moved = true;
    await Promise.all([spins, writes]);
    const [move] = server.moves();
    expect(move).toMatchObject({ msg: "namespace moved to the overflow worker" });
    expect(move!.busyMs).toBeGreaterThan(500);
    expect(move!.stepMs).toBeUndefined();
    expect(await server.overflowGauge()).toBe(1);
  });

  it("keeps a busy namespace in the overflow worker while it stays busy there alone, then moves it back", async () => {
    const server = await start({ overflowQuietMs: 1_500 });
    const heavy = "busy";
    const quiet = "beside";
    expect(namespaceWorker(heavy, 1)).toBe(namespaceWorker(quiet, 1));
    let spinning = true;
    let writing = true;
    const spins = (async () => {
      for (let i = 0; spinning && i < 400; i++)
        expect((await server.push(heavy, "spin", { ms: 100 })).status).toBe(200);
    })();
    const writes = (async () => {
      for (let i = 0; writing && i < 400; i++) {
        expect((await server.push(quiet, "createTodo", { id: `q${i}` })).status).toBe(200);
        await sleep(50);
      }
    })();
    await until(() => server.moves().length === 1, 20_000);
    writing = false;
    await writes;
    // Alone in the overflow worker and still busy for twice the quiet time: it stays there.
    await sleep(3_000);
    expect(server.moves()).toHaveLength(1);
    spinning = false;
    await spins;
    // Quiet, it moves back.
    await until(() => server.moves().length === 2, 10_000);
    expect(server.moves()[1]).toMatchObject({ msg: "namespace moved back to its worker" });
  });

  it("moves a namespace back once none of its steps passed the budget for the quiet time", async () => {
    const server = await start({ overflowQuietMs: 1_000 });
    const ns = "returns";
    expect((await server.push(ns, "createTodo", { id: "t1" })).status).toBe(200);
    for (let i = 0; i < 2; i++) {
      const step = await server.hold(ns);
      await sleep(LONG_STEP_MS);
      step.release();
      expect((await step.answered).status).toBe(200);
    }
    await until(() => server.moves().length === 1);
    expect((await server.push(ns, "createTodo", { id: "t2" })).status).toBe(200);
    await until(() => server.moves().length === 2, 10_000);
    expect(server.moves()[1]).toMatchObject({ msg: "namespace moved back to its worker" });
    expect(await server.overflowGauge()).toBe(0);
    // Back in its own worker, with every row written in either.
    expect((await server.push(ns, "createTodo", { id: "t3" })).status).toBe(200);
    const ids = (await server.pull(ns)).rowsPatch.flatMap((op) => (op.value ? [op.value.id] : []));
    expect(ids.sort()).toEqual(["t1", "t2", "t3"]);
  });

  it("loses no write and fails no request while a namespace moves back and forth under load", async () => {
    // Every spin passes the budget: the namespace moves to the overflow worker and, in each pause,
    // back, while clients push and pull side by side.
    const server = await start({ stepBudgetMs: 2, overflowQuietMs: 40 });
    const ns = "busy";
    const statuses: number[] = [];
    const written: string[] = [];
    const client = async (clientID: string, rounds: number) => {
      for (let i = 0; i < rounds; i++) {
        const id = `${clientID}-${i}`;
        const pushed = await server.push(ns, "createTodo", { id }, clientID);
        statuses.push(pushed.status);
        if (pushed.status === 200) written.push(id);
        await server.pull(ns, clientID);
      }
    };
    for (let round = 0; round < 6; round++) {
      await Promise.all([
        client(`a${round}`, 5),
        client(`b${round}`, 5),
        (async () => {
          for (let i = 0; i < 3; i++)
            statuses.push((await server.push(ns, "spin", { ms: 10 }, `s${round}`)).status);
        })(),
      ]);
      // Quiet for longer than the namespace's stay (it doubles each time it comes back soon).
      await sleep(40 * 2 ** round + 100);
    }
    expect(statuses.every((status) => status === 200)).toBe(true);
    const msgs = server.moves().map((line) => line.msg);
    expect(
      msgs.filter((msg) => msg === "namespace moved to the overflow worker").length,
    ).toBeGreaterThanOrEqual(2);
    expect(msgs.filter((msg) => msg === "namespace moved back to its worker").length).toBeGreaterThanOrEqual(
      1,
    );
    // Every acknowledged write is there, whichever worker took it.
    const ids = (await server.pull(ns, "reader")).rowsPatch.flatMap((op) =>
      op.op === "put" && op.value ? [op.value.id] : [],
    );
    expect(ids.sort()).toEqual([...written].sort());
    expect(written).toHaveLength(60);
  });

  it("shares the open-namespace cap with the overflow worker, so that together they stay within it", async () => {
    for (const [stepBudgetMs, mostOpen] of [
      [STEP_BUDGET_MS, 2],
      [0, 4],
    ] as const) {
      const server = await start({ maxOpenNamespaces: 4, stepBudgetMs });
      for (let i = 0; i < 4; i++) {
        const response = await fetch(`${server.url}/shared-${i}/pull`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `u${i}` },
          body: JSON.stringify({ clientGroupID: "g", clientID: "c", cookie: null }),
        });
        expect(response.status).toBe(200);
      }
      // One worker and the overflow worker: half of the cap each; without moves, all of it.
      const text = await (await fetch(`${server.url}/metrics`)).text();
      expect(Number(/^weir_open_namespaces (\d+)/m.exec(text)?.[1])).toBe(mostOpen);
    }
  });

  it("moves nothing with stepBudgetMs 0", async () => {
    const server = await start({ stepBudgetMs: 0 });
    for (let i = 0; i < 2; i++) {
      const step = await server.hold("stays");
      await sleep(LONG_STEP_MS);
      step.release();
      expect((await step.answered).status).toBe(200);
    }
    // A request after them waits for any move they started.
    await server.pull("stays");
    expect(await server.overflowGauge()).toBe(0);
    expect(server.moves()).toEqual([]);
  });
});
