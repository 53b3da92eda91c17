/**
 * The reader's thread: follows PostgreSQL with `postgresUpstream` (in this thread) and answers
 * the caller's thread, which holds the `PostgresUpstream` that `upstreamInThread` made.
 */
import { parentPort, workerData } from "node:worker_threads";
import { type PostgresUpstream, postgresUpstream } from "./postgres-upstream.js";
import type { PostgresUpstreamOptions } from "./upstream-options.js";
import { answerCall, ServedPorts } from "./upstream-port.js";
import {
  type ThreadCallbacks,
  type ThreadConnect,
  type ThreadEvent,
  type ThreadRequest,
  toWireError,
} from "./upstream-thread-messages.js";

const port = parentPort;
if (!port) throw new Error("upstream-thread-worker runs as a worker thread");
const { options, callbacks } = workerData as { options: PostgresUpstreamOptions; callbacks: ThreadCallbacks };

const send = (event: ThreadEvent) => port.postMessage(event);

let upstream: PostgresUpstream | undefined;
let sentSchema = "";
/** The schema changes when a column is added upstream: the caller hears of it before any answer that follows. */
const sendSchemaIfChanged = () => {
  if (!upstream) return;
  const schema = upstream.schema;
  const text = JSON.stringify(schema);
  if (text === sentSchema) return;
  sentSchema = text;
  send({ t: "schema", schema });
};

const log = (level: "info" | "warn" | "error", fields: Record<string, unknown>) => {
  try {
    send({ t: "log", level, fields });
  } catch {
    // A field no thread can receive (a function): its text instead.
    send({
      t: "log",
      level,
      fields: JSON.parse(JSON.stringify(fields, (_k, v) => (typeof v === "bigint" ? String(v) : v))),
    });
  }
};

try {
  upstream = await postgresUpstream({
    ...options,
    thread: false,
    ...(callbacks.logger ? { logger: { log } } : {}),
    ...(callbacks.onCommit
      ? {
          onCommit(namespaces: string[], watermark: bigint) {
            sendSchemaIfChanged();
            send({ t: "commit", namespaces, watermark });
          },
        }
      : {}),
  });
  sentSchema = JSON.stringify(upstream.schema);
  send({ t: "started", schema: upstream.schema });
} catch (error) {
  send({ t: "failed", error: toWireError(error) });
  port.close();
}

const served = new ServedPorts(() => upstream as PostgresUpstream);

port.on("message", async (message: ThreadRequest | ThreadConnect) => {
  const running = upstream;
  if (!running) return;
  if (message.t === "connect") {
    served.serve(message.port);
    return;
  }
  // The upstream closes: the other threads' ports close first, so their calls answer 503.
  if (message.t === "close") served.close();
  let event: ThreadEvent;
  try {
    const value = await answerCall(running, message);
    sendSchemaIfChanged();
    event = { t: "reply", id: message.id, value };
  } catch (error) {
    event = { t: "reply", id: message.id, error: toWireError(error) };
  }
  send(event);
  // Closed: nothing more to answer, and the thread ends once its connections have.
  if (message.t === "close") port.close();
});
