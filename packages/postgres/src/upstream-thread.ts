import { MessageChannel, type MessagePort, Worker } from "node:worker_threads";
import { backoffMs, UPSTREAM_BACKOFF } from "@weir/protocol";
import { dropReplication } from "./drop-replication.js";
import { sourceThrough, UpstreamCalls, unavailable } from "./upstream-calls.js";
import type { PostgresUpstream, UpstreamSchema } from "./upstream-interface.js";
import { upstreamMetrics } from "./upstream-metrics.js";
import { type PostgresUpstreamOptions, resolveOptions } from "./upstream-options.js";
import { ConnectedPorts } from "./upstream-port.js";
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
/** A thread that ran this long before it failed starts the restarts' backoff afresh. */
const HEALTHY_RUN_MS = 60_000;

/**
 * The reader's thread, for tests that end it as a crash would: `upstream[READER_THREAD]()` is
 * the `Worker` running now (undefined while it is restarting).
 */
const READER_THREAD = Symbol.for("weir.postgres.readerThread");

/** One run of the reader's thread: the Worker and the calls posted to it. */
interface Run {
  worker: Worker;
  calls: UpstreamCalls;
  startedAt: number;
}

/**
 * `postgresUpstream` with its reader in a worker thread of its own: the same upstream, whose
 * calls cross to that thread and whose `onCommit` and `logger` are called back on this one. A
 * thread that fails (throws, or exits on its own) is logged and started again after a backoff
 * (a second, doubling up to a minute): the new one resumes from the slot and the buffer file, as
 * after a restart of the process. Meanwhile calls answer 503; sources and ports handed out go on
 * with the new thread.
 */
export async function upstreamInThread(input: PostgresUpstreamOptions): Promise<PostgresUpstream> {
  const { onCommit, logger, random: _random, ...options } = input;
  const callbacks: ThreadCallbacks = { logger: logger !== undefined, onCommit: onCommit !== undefined };
  let schema: UpstreamSchema | undefined;
  let closing: Promise<void> | null = null;
  let failures = 0;
  let restarts = 0;
  let restartTimer: NodeJS.Timeout | null = null;
  /** The thread running now; null while a failed one waits to be started again. */
  let run: Run | null = null;
  /** Calls made while no thread runs. */
  const down = new UpstreamCalls({ postMessage() {} });
  down.stop(unavailable("the upstream's reader thread failed and is restarting"));
  const current = () => run?.calls ?? down;

  /** Starts a thread; resolves once its upstream started, rejects with why it could not. */
  const launch = () =>
    new Promise<Run>((resolve, reject) => {
      const worker = new Worker(WORKER_SCRIPT, { workerData: { options, callbacks } });
      const started: Run = { worker, calls: new UpstreamCalls(worker), startedAt: 0 };
      let running = false;
      const ended = (error: Error, failed: boolean) => {
        started.calls.stop(error);
        if (!running) return reject(error);
        if (run !== started) return;
        run = null;
        if (!failed || closing) return;
        connected.reattach();
        if (performance.now() - started.startedAt > HEALTHY_RUN_MS) failures = 0;
        scheduleRestart();
      };
      worker.on("message", (event: ThreadEvent) => {
        switch (event.t) {
          case "started":
            schema = event.schema;
            running = true;
            started.startedAt = performance.now();
            // The thread running now from here on: a failure of it from here on restarts it.
            if (!closing) run = started;
            resolve(started);
            return;
          case "failed":
            ended(fromWireError(event.error), true);
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
            started.calls.settle(event);
            return;
        }
      });
      worker.on("error", (error) => {
        if (running) logger?.log("error", { msg: "upstream thread failed", error: error.message });
        ended(unavailable(`the upstream's thread failed: ${error.message}`), true);
      });
      // Only a close ends the thread; any other exit is a failure.
      worker.on("exit", (code) => {
        if (running && !closing && !started.calls.stopped)
          logger?.log("error", { msg: "upstream thread failed", exitCode: code });
        ended(
          unavailable(closing ? "the upstream is closed" : `the upstream's thread exited (${code})`),
          !closing,
        );
      });
    });

  const scheduleRestart = () => {
    failures++;
    const delayMs = backoffMs(UPSTREAM_BACKOFF, failures);
    logger?.log("warn", { msg: "upstream thread restarting", inMs: delayMs, failures });
    restartTimer = setTimeout(() => {
      restartTimer = null;
      launch().then(
        (started) => {
          if (closing) {
            void started.worker.terminate();
            return;
          }
          restarts++;
          logger?.log("info", { msg: "upstream thread restarted", failures });
          connected.reattach();
        },
        (error: Error) => {
          if (closing) return;
          logger?.log("error", { msg: "upstream thread did not start again", error: error.message });
          scheduleRestart();
        },
      );
    }, delayMs);
    restartTimer.unref();
  };

  /** A channel to the thread running now, for another thread's calls (null while none runs). */
  const attach = (): MessagePort | null => {
    if (!run) return null;
    const { port1, port2 } = new MessageChannel();
    run.worker.postMessage({ t: "connect", port: port1 } satisfies ThreadConnect, [port1]);
    return port2;
  };
  const connected = new ConnectedPorts(attach);

  await launch();

  /** Closes the upstream in its thread, then waits for the thread to end (ending it if it lingers). */
  const close = async () => {
    if (restartTimer) clearTimeout(restartTimer);
    connected.close();
    const running = run;
    if (!running || running.calls.stopped) return;
    const { worker } = running;
    const exited = new Promise<void>((resolve) => worker.once("exit", () => resolve()));
    await running.calls.call({ t: "close" });
    const lingering = setTimeout(() => void worker.terminate(), CLOSE_GRACE_MS);
    await exited;
    clearTimeout(lingering);
  };

  const closeOnce = () => {
    closing ??= close();
    return closing;
  };
  const status = async (): Promise<UpstreamStatus> => ({
    ...(await current().call<UpstreamStatus>({ t: "status" })),
    thread: { restarts },
  });
  return {
    source: (namespace) => sourceThrough(current, namespace),
    status,
    connect: () => connected.connect(),
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
    [READER_THREAD]: () => run?.worker,
  } as PostgresUpstream;
}
