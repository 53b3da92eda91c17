import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createServer } from "@weir/node-host";
import { expect, it } from "vitest";
import { queries, rowsOf, sockets, socketTrace, zeroClient } from "../test/zero-client.js";
import { create, newID, type Todo } from "../test/zero-client-suite.js";
import { zeroTodoConfig } from "./zero-config.js";

// The stock Zero client while its namespace moves between worker threads: a namespace whose
// steps pass the step budget moves to the overflow worker and, once quiet, back; each move closes
// its Zero sockets with 1012, and the client reconnects to the worker it is in now. The budget
// here is 1 ms, so that the app's own steps (a namespace's first open, a push) move it.

const WORKER_CONFIG = fileURLToPath(new URL("../test/worker-config.mjs", import.meta.url));

it("the stock Zero client follows its namespace to the overflow worker and back, its rows intact", async () => {
  const dataDir = await mkdtemp(join(tmpdir(), "weir-zero-overflow-"));
  const lines: Array<Record<string, unknown>> = [];
  const server = createServer({
    ...zeroTodoConfig,
    dataDir,
    logger: { log: (_level, fields) => lines.push(fields) },
    workers: 1,
    workerConfig: { module: WORKER_CONFIG, argument: { dataDir } },
    stepBudgetMs: 1,
    overflowQuietMs: 300,
  });
  const { url } = await server.listen({ port: 0, host: "127.0.0.1" });
  const moves = () =>
    lines.filter((line) => String(line.msg).startsWith("namespace moved")).map((l) => l.msg);
  const z = zeroClient(`${url}/todo`, "ines", { storageKey: "overflow" });
  const written: string[] = [];
  const write = async () => {
    const id = newID();
    expect(
      await create(z, { id, text: `Todo ${written.length}`, done: false, sort: written.length }),
    ).toEqual({
      type: "success",
    });
    written.push(id);
  };
  try {
    // Writes until the namespace moved to the overflow worker, then one more there.
    while (!moves().includes("namespace moved to the overflow worker") && written.length < 200) await write();
    expect(moves()).toContain("namespace moved to the overflow worker");
    await write();
    // Quiet: it moves back to its own worker; then one more write there.
    await rowsOf<Todo>(z, queries.allTodos(), (rows) => rows.length === written.length);
    const until = Date.now() + 10_000;
    while (!moves().includes("namespace moved back to its worker") && Date.now() < until)
      await new Promise((resolve) => setTimeout(resolve, 50));
    expect(moves()).toContain("namespace moved back to its worker");
    await write();

    // What the app sees: every todo it wrote, in order, from the client's own view.
    const rows = await rowsOf<Todo>(z, queries.allTodos(), (rows) => rows.length === written.length);
    expect(rows.map((row) => row.id)).toEqual(written);
    // It was moved off at least twice (closed with 1012), and each reconnect went on from its
    // cookie: no poke cleared its rows.
    const own = sockets.filter((s) => s.connectURL.searchParams.get("clientID") === z.clientID);
    expect(own.filter((s) => s.closeCode === 1012).length, socketTrace(z.clientID)).toBeGreaterThanOrEqual(2);
    for (const socket of own.slice(1)) {
      expect(socket.connectURL.searchParams.get("baseCookie"), socketTrace(z.clientID)).not.toBe("");
      expect(JSON.stringify(socket.received), socketTrace(z.clientID)).not.toContain('"op":"clear"');
    }
  } finally {
    await z.close();
    await server.close();
    await rm(dataDir, { recursive: true, force: true });
  }
});
