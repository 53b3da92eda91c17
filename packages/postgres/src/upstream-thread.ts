import { Worker } from "node:worker_threads";
import { UpstreamCallError, type UpstreamSource } from "@weir/protocol";
import { dropReplication } from "./drop-replication.js";
import { checkSourceNamespace } from "./source-namespace.js";
import type { PostgresUpstream, UpstreamSchema } from "./upstream-interface.js";
import { upstreamMetrics } from "./upstream-metrics.js";
import { type PostgresUpstreamOptions, resolveOptions } from "./upstream-options.js";
import type { UpstreamStatus } from "./upstream-status.js";
import {
  fromWireError,
  type ThreadCallbacks,
  type ThreadEvent,
  type ThreadRequest,
} from "./upstream-thread-messages.js";

// The same path from src/ (tests) and from dist/ (the bundle): the thread runs the built file.
const WORKER_SCRIPT = new URL("../dist/upstream-thread-worker.js", import.meta.url);

/** How long a closed upstream's thread may take to end before it is ended. */
const CLOSE_GRACE_MS = 5_000;

type Request = ThreadRequest extends infer R ? (R extends ThreadRequest ? Omit<R, "id"> : never) : never;

/**
 * `postgresUpstream` with its reader in a worker thread of its own: the same upstream, whose
 * calls cross to that thread and whose `onCommit` and `logger` are called back on this one.
 */
export async function upstreamInThread(input: PostgresUpstreamOptions): Promise<PostgresUpstream> {
  const { onCommit, logger, random: _random, ...options } = input;
  const callbacks: ThreadCallbacks = { logger: logger !== undefined, onCommit: onCommit !== undefined };
  const worker = new Worker(WORKER_SCRIPT, { workerData: { options, callbacks } });
  const pending = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  let nextId = 0;
  let schema: UpstreamSchema | undefined;
  /** Why calls are refused: the thread stopped, or the upstream was closed. */
  let stopped: Error | null = null;
  let closing: Promise<void> | null = null;

  const started = new Promise<void>((resolve, reject) => {
    const stop = (error: Error) => {
      stopped ??= error;
      reject(error);
      for (const call of pending.values()) call.reject(error);
      pending.clear();
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
        case "reply": {
          const call = pending.get(event.id);
          if (!call) return;
          pending.delete(event.id);
          if (event.error) call.reject(fromWireError(event.error));
          else call.resolve(event.value);
          return;
        }
      }
    });
    worker.on("error", (error) => {
      logger?.log("error", { msg: "upstream thread failed", error: error.message });
      stop(unavailable(`the upstream's thread failed: ${error.message}`));
    });
    worker.on("exit", (code) => {
      stop(unavailable(code === 0 ? "the upstream is closed" : `the upstream's thread exited (${code})`));
    });
  });
  await started;

  const call = <T>(request: Request): Promise<T> => {
    if (stopped) return Promise.reject(stopped);
    const id = ++nextId;
    return new Promise<T>((resolve, reject) => {
      pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      worker.postMessage({ ...request, id });
    });
  };

  /** Closes the upstream in its thread, then waits for the thread to end (ending it if it lingers). */
  const close = async () => {
    if (stopped) return;
    const exited = new Promise<void>((resolve) => worker.once("exit", () => resolve()));
    await call({ t: "close" });
    const lingering = setTimeout(() => void worker.terminate(), CLOSE_GRACE_MS);
    await exited;
    clearTimeout(lingering);
  };

  const closeOnce = () => {
    closing ??= close();
    return closing;
  };
  const status = () => call<UpstreamStatus>({ t: "status" });
  return {
    source(namespace: string): UpstreamSource {
      checkSourceNamespace(namespace);
      return {
        changes: (watermark, limit) => call({ t: "changes", namespace, watermark, limit }),
        snapshotPage: (table, cursor, limit) => call({ t: "snapshotPage", namespace, table, cursor, limit }),
      };
    },
    status,
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

function unavailable(message: string): UpstreamCallError {
  return new UpstreamCallError(503, "upstream_unavailable", message);
}
