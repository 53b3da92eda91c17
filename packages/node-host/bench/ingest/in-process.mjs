// The same passes without HTTP: host-core's runIngestPass in this process, the namespace on
// node-host's file storage, the upstream source read in process (no JSON over a socket).
import { readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { engineWasmUrl, loadEngine } from "@weir/engine-wasm";
import { closedBreaker, IngestBreaker, runIngestPass } from "@weir/host-core";
import { fileStorage } from "../../dist/index.js";
import { SCHEMA } from "./schema.mjs";

/** A namespace opened as the server opens it, and a pass over it timed. */
export async function inProcessIngester(dataDir, namespace) {
  const engine = await loadEngine(readFileSync(engineWasmUrl));
  const storage = fileStorage(dataDir);
  const store = await storage.open(namespace);
  store.transaction(() => engine.install(store.db, SCHEMA));
  const fence = store.transaction(() => engine.claimFence(store.db));
  const breaker = new IngestBreaker(
    closedBreaker(Date.now()),
    { rows: Number.MAX_SAFE_INTEGER, windowMs: 60_000 },
    () => {},
  );
  return {
    /** One pass to the upstream's newest watermark: its rows and milliseconds. */
    async pass(source, { resnapshot = false } = {}) {
      const started = performance.now();
      const result = await runIngestPass({
        engine,
        store,
        schema: SCHEMA,
        source,
        fence,
        breaker,
        now: Date.now,
        monotonic: () => performance.now(),
        sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
        random: Math.random,
        resnapshot,
      });
      if (result.outcome !== "complete")
        throw new Error(`in-process pass ended ${result.outcome}: ${result.error}`);
      return { rows: result.rows, ms: performance.now() - started };
    },
    async close() {
      store.close();
      await storage.close();
    },
  };
}
