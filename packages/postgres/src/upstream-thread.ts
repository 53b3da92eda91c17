import { MessageChannel, Worker } from "node:worker_threads";
import { dropReplication } from "./drop-replication.js";
import { UpstreamCalls, unavailable } from "./upstream-calls.js";
import type { PostgresUpstream, UpstreamSchema } from "./upstream-interface.js";
import { upstreamMetrics } from "./upstream-metrics.js";
import { type PostgresUpstreamOptions, resolveOptions } from "./upstream-options.js";
import type { UpstreamStatus } from "./upstream-status.js";
import {
  fromWireError,
  type ThreadCallbacks,
  type ThreadConnect,
  type ThreadEvent,
} from "./upstream-thread-messages.js";

// The same path from src/ (tests) and from dist/ (the bundle): the thread runs the built file.
const WORKER_SCRIPT = new URL("../dist/upstream-thread-worker.js", import.meta.url);

/** How long a closed upstream's thread may take to end before it is ended. */
const CLOSE_GRACE_MS = 5_000;

/**
 * `postgresUpstream` with its reader in a worker thread of its own: the same upstream, whose
 * calls cross to that thread and whose `onCommit` and `logger` are called back on this one.
 */
export async function upstreamInThread(input: PostgresUpstreamOptions): Promise<PostgresUpstream> {
  const { onCommit, logger, random: _random, ...options } = input;
  const callbacks: ThreadCallbacks = { logger: logger !== undefined, onCommit: onCommit !== undefined };
  const worker = new Worker(WORKER_SCRIPT, { workerData: { options, callbacks } });
  const calls = new UpstreamCalls(worker);
  let schema: UpstreamSchema | undefined;
  let closing: Promise<void> | null = null;

  const started = new Promise<void>((resolve, reject) => {
    const stop = (error: Error) => {
      calls.stop(error);
      reject(error);
    };
    worker.on("message", (event: ThreadEvent) => {
      switch (event.t) {
        case "started":
          schema = event.schema;
          resolve();
          return;
        case "failed":
          stop(fromWireError(event.error));
          return;
        case "schema":
          schema = event.schema;
          return;
        case "commit":
          try {
            onCommit?.(event.namespaces, event.watermark);
          } catch {}
          return;
        case "log":
          logger?.log(event.level, event.fields);
          return;
        case "reply":
          calls.settle(event);
          return;
      }
    });
    worker.on("error", (error) => {
      logger?.log("error", { msg: "upstream thread failed", error: error.message });
      stop(unavailable(`the upstream's thread failed: ${error.message}`));
    });
    worker.on("exit", (code) => {
      if (code !== 0 && !calls.stopped && !closing)
        logger?.log("error", { msg: "upstream thread failed", exitCode: code });
      stop(unavailable(code === 0 ? "the upstream is closed" : `the upstream's thread exited (${code})`));
    });
  });
  await started;

  /** Closes the upstream in its thread, then waits for the thread to end (ending it if it lingers). */
  const close = async () => {
    if (calls.stopped) return;
    const exited = new Promise<void>((resolve) => worker.once("exit", () => resolve()));
    await calls.call({ t: "close" });
    const lingering = setTimeout(() => void worker.terminate(), CLOSE_GRACE_MS);
    await exited;
    clearTimeout(lingering);
  };

  const closeOnce = () => {
    closing ??= close();
    return closing;
  };
  const status = () => calls.call<UpstreamStatus>({ t: "status" });
  return {
    source: (namespace) => calls.source(namespace),
    status,
    connect() {
      const { port1, port2 } = new MessageChannel();
      // A closed upstream's channel is closed at once: the other thread's calls answer 503.
      if (calls.stopped) port1.close();
      else worker.postMessage({ t: "connect", port: port1 } satisfies ThreadConnect, [port1]);
      return port2;
    },
    get schema(): UpstreamSchema {
      return schema as UpstreamSchema;
    },
    metrics: upstreamMetrics(status),
    close: closeOnce,
    async dropReplication() {
      await closeOnce();
      const { databaseUrl, slot, publication } = resolveOptions(input);
      return dropReplication({ databaseUrl, slot, publication });
    },
  };
}
