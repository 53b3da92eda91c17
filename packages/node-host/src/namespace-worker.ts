import { parentPort, workerData } from "node:worker_threads";
import { isWorkRefusal } from "@weir/engine-wasm";
import {
  errorDetail,
  type IngestEvent,
  internalErrorBody,
  jsonParts,
  type Logger,
  newRequestId,
  type RequestParts,
  type RequestRecord,
  type ResponseParts,
  type WeirHost,
  type ZeroSocketHandler,
  type ZeroUpgrade,
} from "@weir/host-core";
import { BusyShare } from "./busy-share.js";
import { jsonLineLogger } from "./json-line-logger.js";
import { loadWorkerOptions } from "./load-worker-options.js";
import { checkNodeOptions, chooseAuthentication } from "./node-options.js";
import { RelayedWake } from "./relayed-wake.js";
import { type NodeHost, startNodeHost } from "./start-node-host.js";
import { targetNamespace } from "./target-namespace.js";
import type { FromWorker, ToWorker, WorkerAnswer, WorkerInit, WorkerReport } from "./worker-messages.js";

// A namespace worker: one host-core host for the namespaces that hash to this thread (or, in the
// overflow worker, that moved to it). The routing thread keeps the sockets and relays requests,
// answers and frames (worker-pool.ts).

const port = parentPort;
if (!port) throw new Error("namespace-worker runs as a worker thread");
const init = workerData as WorkerInit;
const post = (message: FromWorker, transfer?: ArrayBuffer[]) => port.postMessage(message, transfer);

/**
 * Bodies of this many characters or more go to the routing thread as bytes, encoded here and
 * moved, not copied: the thread every namespace shares then only writes them (a 60,000-row
 * reset answers about 5 MB).
 */
const BYTES_BODY_CHARS = 64 * 1024;
const utf8 = new TextEncoder();

const records: RequestRecord[] = [];
const ingest: IngestEvent[] = [];
let node: NodeHost | undefined;
let logger: Logger | undefined;
let reportTimer: NodeJS.Timeout | undefined;

/** What the metrics need, taken since the last report; null when nothing is new (unless `always`). */
function takeReport(always = false): WorkerReport | null {
  const host = node?.host;
  const report: WorkerReport = {
    records: records.splice(0),
    ingest: ingest.splice(0),
    openNamespaces: host?.openNamespaces ?? 0,
    unavailableNamespaces: host?.unavailableNamespaces.size ?? 0,
  };
  return always || report.records.length > 0 || report.ingest.length > 0 ? report : null;
}

/** Background work (ingest passes) is reported within a tenth of a second. */
function reportSoon(): void {
  reportTimer ??= setTimeout(() => {
    reportTimer = undefined;
    const report = takeReport();
    if (report) post({ t: "report", report });
  }, 100);
}

/** How much of the worker's time each namespace's steps take (see `onStep`). */
const busy = new BusyShare({ countAlone: init.overflow });
const wake = new RelayedWake((ids) => post({ t: "wake", ids }));
/** Requests being answered, by namespace (a namespace is released once it has none). */
const answering = new Map<string, number>();
const answered = new Map<string, Array<() => void>>();
/** The origin the routing thread gives every request's URL. */
const ORIGIN = "http://localhost";
const upgrades = new Map<number, ZeroUpgrade>();
const zeroSockets = new Map<number, { handler: ZeroSocketHandler | null; waiting: string[] | null }>();

async function start(): Promise<WeirHost> {
  const options = await loadWorkerOptions(init.module, init.argument, init.ports);
  logger = options.logger ?? jsonLineLogger();
  // The routing thread has warned about development authentication already.
  const authenticate = chooseAuthentication(options, { log: () => {} });
  checkNodeOptions(options);
  node = await startNodeHost(
    options,
    { ...options, authenticate, maxOpenNamespaces: init.maxOpenNamespaces },
    logger,
    {
      wake,
      ...(init.stepBudgetMs === null
        ? {}
        : {
            // A query stopped past its work budget counts too: its statement held the worker
            // for about that budget, which a client can have it do again and again. So do
            // shorter steps that together keep the worker busy while others wait (BusyShare).
            onStep: (namespace: string, ms: number, failure: unknown) => {
              const held = busy.step(namespace, ms);
              if (ms > init.stepBudgetMs! || isWorkRefusal(failure)) post({ t: "overBudget", namespace, ms });
              else if (held !== null) post({ t: "overBudget", namespace, ms: held, busy: true });
            },
          }),
      ...(options.metrics === false
        ? {}
        : {
            observe: (record: RequestRecord) => records.push(record),
            observeIngest: (event: IngestEvent) => {
              ingest.push(event);
              reportSoon();
            },
          }),
    },
  );
  return node.host;
}

function toParts(message: Extract<ToWorker, { t: "request" }>): RequestParts {
  const headers = new Headers(message.headers);
  const hasBody = message.body !== null && message.method !== "GET" && message.method !== "HEAD";
  let request: Request | undefined;
  return {
    method: message.method,
    url: message.url,
    headers,
    body: hasBody ? message.body : null,
    request() {
      request ??= new Request(message.url, {
        method: message.method,
        headers,
        body: hasBody ? (message.body as Uint8Array<ArrayBuffer>) : null,
      });
      return request;
    },
  };
}

function toAnswer(id: number, parts: ResponseParts): WorkerAnswer {
  const answer: WorkerAnswer = { status: parts.status, headers: { ...parts.headers }, body: parts.body };
  if (parts.drop) answer.drop = true;
  if (parts.upgrade) answer.upgrade = parts.upgrade;
  if (parts.zero) {
    upgrades.set(id, parts.zero);
    answer.zero = { protocol: parts.zero.protocol, userID: parts.zero.userID };
  }
  return answer;
}

async function answer(host: WeirHost, message: Extract<ToWorker, { t: "request" }>): Promise<void> {
  const namespace = targetNamespace(message.url.slice(ORIGIN.length));
  answering.set(namespace, (answering.get(namespace) ?? 0) + 1);
  let parts: ResponseParts;
  try {
    parts = await host.handleParts(toParts(message));
  } catch (error) {
    // handleParts never throws; this is the bridge's own failure.
    const requestId = newRequestId();
    logger?.log("error", { msg: "worker bridge failed", requestId, error: errorDetail(error) });
    parts = jsonParts(internalErrorBody(requestId), 500);
  } finally {
    const left = answering.get(namespace)! - 1;
    if (left > 0) answering.set(namespace, left);
    else {
      answering.delete(namespace);
      for (const resolve of answered.get(namespace)?.splice(0) ?? []) resolve();
      answered.delete(namespace);
    }
  }
  const reply: FromWorker = {
    t: "answer",
    id: message.id,
    answer: toAnswer(message.id, parts),
    report: takeReport(true),
  };
  const body = reply.answer.body;
  if (typeof body === "string" && body.length >= BYTES_BODY_CHARS) {
    const bytes = utf8.encode(body);
    reply.answer.body = bytes;
    post(reply, [bytes.buffer as ArrayBuffer]);
  } else post(reply);
}

/** Closes the namespace once the requests for it this worker has are answered (none come after). */
async function release(namespace: string): Promise<void> {
  const host = await ready.catch(() => undefined);
  if (answering.has(namespace)) {
    await new Promise<void>((resolve) => {
      const waiting = answered.get(namespace);
      if (waiting) waiting.push(resolve);
      else answered.set(namespace, [resolve]);
    });
  }
  await host?.release(namespace);
}

function openZero(id: number): void {
  const upgrade = upgrades.get(id);
  upgrades.delete(id);
  if (!upgrade) return;
  const entry: { handler: ZeroSocketHandler | null; waiting: string[] | null } = {
    handler: null,
    waiting: [],
  };
  zeroSockets.set(id, entry);
  upgrade
    .open({
      send: (frame) => post({ t: "zeroSend", id, frames: [frame] }),
      sendAll: (frames) => post({ t: "zeroSend", id, frames: [...frames] }),
      close: (code, reason) => post({ t: "zeroClose", id, code, reason }),
    })
    .then(
      (handler) => {
        const frames = entry.waiting ?? [];
        entry.waiting = null;
        if (!zeroSockets.has(id)) {
          handler?.socketClosed();
          return;
        }
        entry.handler = handler;
        if (!handler) return;
        for (const frame of frames) handler.receive(frame);
      },
      () => post({ t: "zeroClose", id, code: 1011, reason: "server error" }),
    );
}

function zeroClosed(id: number): void {
  upgrades.delete(id);
  const entry = zeroSockets.get(id);
  zeroSockets.delete(id);
  entry?.handler?.socketClosed();
}

const ready = start();
ready.then(
  () => post({ t: "ready" }),
  (error: unknown) => post({ t: "failed", message: (error as Error).message ?? String(error) }),
);

port.on("message", (message: ToWorker) => {
  switch (message.t) {
    case "request":
      if (node) void answer(node.host, message);
      else void ready.then((host) => answer(host, message));
      return;
    case "zeroOpen":
      openZero(message.id);
      return;
    case "zeroFrame": {
      const entry = zeroSockets.get(message.id);
      if (entry?.waiting) entry.waiting.push(message.frame);
      else entry?.handler?.receive(message.frame);
      return;
    }
    case "zeroClosed":
      zeroClosed(message.id);
      return;
    case "wakeOpen":
      wake.opened(message.id, message.namespace, message.clientID, message.subscription);
      return;
    case "wakeClosed":
      wake.closed(message.id);
      return;
    case "upstreamCommitted":
      node?.host.upstreamCommitted(message.namespaces);
      return;
    case "watch":
      void ready
        .then((host) => host.watchUpstream(message.namespace))
        .catch((error: unknown) =>
          logger?.log("error", {
            msg: "polling a moved namespace's upstream failed",
            error: errorDetail(error),
          }),
        );
      return;
    case "release":
      void release(message.namespace)
        .catch((error: unknown) =>
          logger?.log("error", { msg: "releasing a namespace failed", error: errorDetail(error) }),
        )
        .finally(() => post({ t: "released", namespace: message.namespace }));
      return;
    case "close":
      void (async () => {
        await ready.catch(() => {});
        await node?.close();
        if (reportTimer) clearTimeout(reportTimer);
        const report = takeReport();
        if (report) post({ t: "report", report });
        post({ t: "closed" });
        port.close();
      })();
      return;
  }
});
