import { Worker } from "node:worker_threads";
import { describe, expect, it } from "vitest";
import { tempDir } from "../test/helpers.js";

// Every worker thread of a server opens the data directory's catalog on its first request. When
// two open a new catalog at once, SQLite may refuse one of them at once instead of waiting (each
// would wait on the other to turn the file to WAL): before, that request failed with a 500
// "database is locked". Threads here open fresh catalogs in lockstep, many times over.

const CATALOG_MODULE = new URL("../dist/namespace-catalog.js", import.meta.url).href;
const THREADS = 4;
const ROUNDS = 300;

/** Each thread opens catalog `round` of `base` when all have reached it; answers its failures. */
const OPENER = `
const { parentPort, workerData } = require("node:worker_threads");
import(workerData.module).then(({ NamespaceCatalog }) => {
  const { base, gate, rounds, threads } = workerData;
  const step = new Int32Array(gate);
  const failures = [];
  for (let round = 0; round < rounds; round++) {
    if (Atomics.add(step, round, 1) + 1 === threads) Atomics.notify(step, round);
    else while (Atomics.load(step, round) < threads) Atomics.wait(step, round, Atomics.load(step, round), 100);
    try {
      NamespaceCatalog.open(base + "/" + round).close();
    } catch (error) {
      failures.push(String(error));
    }
  }
  parentPort.postMessage(failures);
});`;

describe("the namespace catalog", () => {
  it("opens in every thread when threads open a new catalog together", async () => {
    const base = tempDir();
    const { mkdirSync } = await import("node:fs");
    for (let round = 0; round < ROUNDS; round++) mkdirSync(`${base}/${round}`);
    const gate = new SharedArrayBuffer(4 * ROUNDS);
    const failures = await Promise.all(
      Array.from(
        { length: THREADS },
        () =>
          new Promise<string[]>((resolve, reject) => {
            const worker = new Worker(OPENER, {
              eval: true,
              workerData: { module: CATALOG_MODULE, base, gate, rounds: ROUNDS, threads: THREADS },
            });
            worker.once("message", resolve);
            worker.once("error", reject);
          }),
      ),
    );
    expect(failures.flat()).toEqual([]);
  });
});
