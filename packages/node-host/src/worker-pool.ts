import { type MessagePort, Worker } from "node:worker_threads";
import type {
  IngestEvent,
  Logger,
  RequestRecord,
  Subscription,
  ZeroSocket,
  ZeroUpgrade,
} from "@weir/host-core";
import { type MoveSteps, NamespaceMoves } from "./namespace-moves.js";
import type { OverflowOptions } from "./overflow-policy.js";
import type { FromWorker, ToWorker, WorkerAnswer, WorkerInit, WorkerReport } from "./worker-messages.js";

/** The worker script, beside this module's build (tests running the sources use the build too). */
const WORKER_SCRIPT = new URL("../dist/namespace-worker.js", import.meta.url);

/** What the pool tells the routing thread. */
export interface WorkerPoolEvents {
  /** A worker asks to wake a namespace's sockets. */
  wake(ids: readonly number[]): void;
  /** Records and ingest events for the metrics. */
  report?(records: readonly RequestRecord[], ingest: readonly IngestEvent[]): void;
}

interface Pending {
  resolve(answer: WorkerAnswer): void;
  reject(error: Error): void;
}

interface Thread {
  worker: Worker;
  pending: Map<number, Pending>;
  /** Namespaces the worker is closing for another to take over, each resolved once closed. */
  releasing: Map<string, () => void>;
  open: number;
  unavailable: number;
  /** Settles once the thread has ended (a close waits on it even if the thread ended before). */
  exited: Promise<void>;
}

/** A request's answer, and the worker that gave it. */
export interface Routed {
  answer: WorkerAnswer;
  thread: number;
}

/** The close code of a Zero socket whose namespace moved to another worker: the client reconnects. */
export const CLOSE_MOVED = 1012;

/** Which of `workers` threads runs a namespace: FNV-1a of its name, modulo the count. */
export function namespaceWorker(namespace: string, workers: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < namespace.length; i++) {
    hash ^= namespace.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) % workers;
}

/**
 * Namespace workers and the routing between them: each namespace hashes to one worker, which
 * runs it (its file lease is that worker's). Requests go to the worker as data and come back as
 * answers; Zero sockets stay here and their frames are relayed both ways by the id of the request
 * that opened them.
 *
 * With `overflow` options (file storage), a namespace whose steps pass the step budget moves to
 * the overflow worker, one more thread, and back once quiet (namespace-moves.ts).
 */
export class WorkerPool {
  private readonly threads: Thread[] = [];
  private readonly zeroSockets = new Map<number, { thread: number; namespace: string; socket: ZeroSocket }>();
  private readonly wakeSockets = new Map<
    number,
    { namespace: string; clientID: string; subscription: Subscription }
  >();
  private readonly moves: NamespaceMoves | null;
  /** Requests out with a worker, by namespace (counted when namespaces can move). */
  private readonly inFlight = new Map<string, number>();
  private readonly drainWaiters = new Map<string, Array<() => void>>();
  private nextId = 1;
  private closing = false;

  constructor(
    private readonly init: Omit<WorkerInit, "maxOpenNamespaces" | "stepBudgetMs" | "overflow" | "ports"> & {
      ports?: () => Record<string, MessagePort>;
      count: number;
      maxOpenNamespaces: number;
      overflow?: OverflowOptions;
    },
    private readonly events: WorkerPoolEvents,
    private readonly logger: Logger,
  ) {
    this.moves =
      init.overflow && init.overflow.stepBudgetMs > 0
        ? new NamespaceMoves(init.overflow, init.count, this.moveSteps(), logger)
        : null;
  }

  /** Starts the workers; rejects when one cannot load its config. */
  async start(): Promise<void> {
    await Promise.all(Array.from({ length: this.init.count }, (_, index) => this.spawn(index)));
  }

  /** The namespaces' own workers (the overflow worker not counted). */
  get size(): number {
    return this.init.count;
  }

  /** Namespaces in the overflow worker now. */
  get overflowNamespaces(): number {
    return this.moves?.size ?? 0;
  }

  /** The worker a namespace lives in. */
  route(namespace: string): number {
    return this.moves?.inOverflow(namespace) ? this.init.count : namespaceWorker(namespace, this.init.count);
  }

  /** Open namespaces over every worker, as each last reported. */
  get openNamespaces(): number {
    return this.threads.reduce((sum, thread) => sum + thread.open, 0);
  }

  get unavailableNamespaces(): number {
    return this.threads.reduce((sum, thread) => sum + thread.unavailable, 0);
  }

  /** A new id for a request or a socket. */
  id(): number {
    return this.nextId++;
  }

  /**
   * Sends a request to the worker of its namespace (once a move of it is done); the answer comes
   * back as data.
   */
  request(namespace: string, message: Omit<Extract<ToWorker, { t: "request" }>, "t">): Promise<Routed> {
    const moving = this.moves?.underWay(namespace);
    if (moving) return moving.then(() => this.request(namespace, message));
    const thread = this.route(namespace);
    if (!this.moves) return this.send(thread, message).then((answer) => ({ answer, thread }));
    this.inFlight.set(namespace, (this.inFlight.get(namespace) ?? 0) + 1);
    return this.send(thread, message)
      .then((answer) => ({ answer, thread }))
      .finally(() => {
        const left = this.inFlight.get(namespace)! - 1;
        if (left > 0) {
          this.inFlight.set(namespace, left);
          return;
        }
        this.inFlight.delete(namespace);
        for (const resolve of this.drainWaiters.get(namespace)?.splice(0) ?? []) resolve();
        this.drainWaiters.delete(namespace);
      });
  }

  /** Resolves once no request of the namespace is out with a worker (at once when none is). */
  private drained(namespace: string): Promise<void> {
    if (!this.inFlight.has(namespace)) return Promise.resolve();
    return new Promise((resolve) => {
      const waiting = this.drainWaiters.get(namespace);
      if (waiting) waiting.push(resolve);
      else this.drainWaiters.set(namespace, [resolve]);
    });
  }

  private send(
    thread: number,
    message: Omit<Extract<ToWorker, { t: "request" }>, "t">,
  ): Promise<WorkerAnswer> {
    const target = this.threads[thread]!;
    return new Promise((resolve, reject) => {
      target.pending.set(message.id, { resolve, reject });
      const body = message.body;
      // A body read into a buffer of its own moves to the worker without a copy.
      const transfer =
        body &&
        body.byteOffset === 0 &&
        body.byteLength === body.buffer.byteLength &&
        !(body.buffer instanceof SharedArrayBuffer)
          ? [body.buffer as ArrayBuffer]
          : [];
      target.worker.postMessage({ t: "request", ...message } satisfies ToWorker, transfer);
    });
  }

  /**
   * The Zero upgrade the worker accepted for request `id`: opening it with a socket relays the
   * socket's frames to the worker, and the worker's to the socket. `abandoned` tells the worker
   * the upgrade was never made.
   */
  zeroUpgrade(
    namespace: string,
    thread: number,
    id: number,
    accepted: { protocol: string | null; userID: string | null },
  ): ZeroUpgrade & { abandoned(): void } {
    return {
      protocol: accepted.protocol,
      userID: accepted.userID,
      open: async (socket) => {
        // The namespace moved (or is moving) since its worker accepted the upgrade: the client
        // reconnects, to the worker it is in now.
        if (this.moves?.underWay(namespace) || this.route(namespace) !== thread) {
          this.post(thread, { t: "zeroClosed", id });
          socket.close(CLOSE_MOVED, "the namespace moved to another worker; reconnect");
          return { receive: () => {}, socketClosed: () => {} };
        }
        this.zeroSockets.set(id, { thread, namespace, socket });
        this.post(thread, { t: "zeroOpen", id });
        return {
          receive: (frame) => this.post(thread, { t: "zeroFrame", id, frame }),
          socketClosed: () => {
            if (this.zeroSockets.delete(id)) this.post(thread, { t: "zeroClosed", id });
          },
        };
      },
      abandoned: () => this.post(thread, { t: "zeroClosed", id }),
    };
  }

  wakeOpened(id: number, namespace: string, clientID: string, subscription: Subscription): void {
    this.wakeSockets.set(id, { namespace, clientID, subscription });
    this.post(this.route(namespace), { t: "wakeOpen", id, namespace, clientID, subscription });
  }

  wakeClosed(id: number, namespace: string): void {
    this.wakeSockets.delete(id);
    this.post(this.route(namespace), { t: "wakeClosed", id });
  }

  /** An upstream in this process committed for these namespaces: each worker hears of its own. */
  upstreamCommitted(namespaces: Iterable<string>): void {
    const byThread = new Map<number, string[]>();
    for (const name of namespaces) {
      // A namespace being moved hears of it in the worker it moves to.
      const moving = this.moves?.underWay(name);
      if (moving) {
        void moving.then(() => this.upstreamCommitted([name]));
        continue;
      }
      const thread = this.route(name);
      const names = byThread.get(thread);
      if (names) names.push(name);
      else byThread.set(thread, [name]);
    }
    for (const [thread, names] of byThread) this.post(thread, { t: "upstreamCommitted", namespaces: names });
  }

  /** What a move of a namespace does here (namespace-moves.ts). */
  private moveSteps(): MoveSteps {
    return {
      overflowReady: async () => {
        if (!this.threads[this.init.count]) await this.spawn(this.init.count);
      },
      closeSockets: (namespace) => {
        for (const [id, open] of this.zeroSockets) {
          if (open.namespace !== namespace) continue;
          this.zeroSockets.delete(id);
          this.post(open.thread, { t: "zeroClosed", id });
          open.socket.close(CLOSE_MOVED, "the namespace moved to another worker; reconnect");
        }
      },
      inFlight: (namespace) => this.inFlight.get(namespace) ?? 0,
      drained: (namespace) => this.drained(namespace),
      release: (thread, namespace) => this.release(thread, namespace),
      moved: (namespace, from) => {
        const to = this.route(namespace);
        let followed = false;
        for (const [id, wake] of this.wakeSockets) {
          if (wake.namespace !== namespace) continue;
          this.post(from, { t: "wakeClosed", id });
          this.post(to, { t: "wakeOpen", id, ...wake });
          followed = true;
        }
        // Its wake sockets' polls of the upstream go on in the new worker.
        if (followed) this.post(to, { t: "watch", namespace });
      },
    };
  }

  /** Has the worker close the namespace once its last request is answered. */
  private release(thread: number, namespace: string): Promise<void> {
    const target = this.threads[thread];
    if (!target) return Promise.resolve();
    return new Promise((resolve) => {
      const waiting = target.releasing.get(namespace);
      target.releasing.set(namespace, () => {
        waiting?.();
        resolve();
      });
      target.worker.postMessage({ t: "release", namespace } satisfies ToWorker);
    });
  }

  /** Each worker closes its namespaces (after the requests it is answering), then exits. */
  async close(): Promise<void> {
    this.closing = true;
    await this.moves?.close();
    await Promise.all(
      this.threads.map(({ worker, exited }) => {
        worker.on("message", (message: FromWorker) => {
          if (message.t === "closed") void worker.terminate();
        });
        worker.postMessage({ t: "close" } satisfies ToWorker);
        return exited;
      }),
    );
  }

  private post(thread: number, message: ToWorker): void {
    this.threads[thread]?.worker.postMessage(message);
  }

  private spawn(index: number): Promise<void> {
    const { count: _count, overflow: _overflow, ports: makePorts, ...shared } = this.init;
    const ports = makePorts?.() ?? {};
    // The overflow worker has a share too: together they stay within the descriptors counted for.
    const threads = this.init.count + (this.moves ? 1 : 0);
    const share = Math.max(1, Math.ceil(this.init.maxOpenNamespaces / threads));
    const worker = new Worker(WORKER_SCRIPT, {
      workerData: {
        ...shared,
        maxOpenNamespaces: share,
        stepBudgetMs: this.moves ? this.moves.stepBudgetMs : null,
        overflow: index === this.init.count,
        ports,
      } satisfies WorkerInit,
      transferList: Object.values(ports),
    });
    const exited = new Promise<void>((resolve) => worker.once("exit", () => resolve()));
    const thread: Thread = {
      worker,
      pending: new Map(),
      releasing: new Map(),
      open: 0,
      unavailable: 0,
      exited,
    };
    this.threads[index] = thread;
    return new Promise((resolve, reject) => {
      worker.on("message", (message: FromWorker) => {
        switch (message.t) {
          case "ready":
            resolve();
            return;
          case "failed":
            reject(new Error(message.message));
            return;
          case "answer": {
            if (message.report) this.reported(thread, message.report);
            const pending = thread.pending.get(message.id);
            thread.pending.delete(message.id);
            pending?.resolve(message.answer);
            return;
          }
          case "report":
            this.reported(thread, message.report);
            return;
          case "zeroSend": {
            const open = this.zeroSockets.get(message.id);
            if (!open) return;
            if (message.frames.length === 1) open.socket.send(message.frames[0]!);
            else if (open.socket.sendAll) open.socket.sendAll(message.frames);
            else for (const frame of message.frames) open.socket.send(frame);
            return;
          }
          case "zeroClose":
            this.zeroSockets.get(message.id)?.socket.close(message.code, message.reason);
            return;
          case "wake":
            this.events.wake(message.ids);
            return;
          case "overBudget":
            // Heard from the worker the namespace runs in (not one it is leaving).
            if (!this.closing && this.route(message.namespace) === index)
              this.moves?.overBudget(message.namespace, index, message.ms, message.busy === true);
            return;
          case "released": {
            const resolve = thread.releasing.get(message.namespace);
            thread.releasing.delete(message.namespace);
            resolve?.();
            return;
          }
        }
      });
      worker.on("error", (error) => {
        this.logger.log("error", { msg: "namespace worker failed", worker: index, error: String(error) });
        reject(error);
      });
      worker.on("exit", () => {
        for (const pending of thread.pending.values())
          pending.reject(new Error("the namespace worker stopped"));
        thread.pending.clear();
        // A worker that stopped holds no namespace: a move waiting on it goes on.
        for (const resolve of thread.releasing.values()) resolve();
        thread.releasing.clear();
        for (const [id, open] of this.zeroSockets) {
          if (open.thread !== index) continue;
          this.zeroSockets.delete(id);
          open.socket.close(1011, "server error");
        }
        // A worker that stopped on its own is replaced; its namespaces reopen in the new one.
        if (!this.closing && this.threads[index] === thread) void this.spawn(index).catch(() => {});
      });
    });
  }

  private reported(thread: Thread, report: WorkerReport): void {
    thread.open = report.openNamespaces;
    thread.unavailable = report.unavailableNamespaces;
    this.events.report?.(report.records, report.ingest);
  }
}
