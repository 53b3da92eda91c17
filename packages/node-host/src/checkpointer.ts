import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";

/** How long after a pass the next one may start while writes go on. */
const PASS_INTERVAL_MS = 10;

/**
 * The worker's code. It keeps a connection per namespace file and runs passive checkpoints on
 * request: they copy committed pages from the WAL into the database (and sync both) without
 * blocking the server's connection, which only ever writes.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.driver);
const open = new Map();
parentPort.on("message", ({ kind, file }) => {
  if (kind === "close") {
    try { open.get(file)?.close(); } catch {}
    open.delete(file);
    parentPort.postMessage({ kind: "closed", file });
    return;
  }
  let error;
  try {
    let db = open.get(file);
    if (!db) {
      db = new Database(file, { fileMustExist: true });
      open.set(file, db);
    }
    db.pragma("wal_checkpoint(PASSIVE)");
  } catch (caught) {
    error = String(caught);
  }
  parentPort.postMessage({ kind: "done", file, error });
});
`;

interface WorkerMessage {
  kind: "done" | "closed";
  file: string;
  error?: string;
}

/**
 * Checkpoints the namespace files in a worker thread, so that the request thread never copies
 * pages back into a database or waits for the disk: SQLite's own checkpoint (every 1,000 WAL
 * pages, on the connection that commits) then finds the pages copied and has almost nothing
 * left to do. While a file is being written, passes follow each other at most every
 * PASS_INTERVAL_MS. The worker does not keep the process alive.
 */
export class Checkpointer {
  #worker: Worker | undefined;
  /** Files with a pass requested or running. */
  readonly #running = new Set<string>();
  /** Files written since their running pass started. */
  readonly #dirty = new Set<string>();
  readonly #closing = new Map<string, () => void>();
  readonly #onError: (file: string, error: string) => void;

  constructor(onError: (file: string, error: string) => void) {
    this.#onError = onError;
  }

  /** The file committed a transaction: a pass follows soon. */
  written(file: string): void {
    if (this.#running.has(file)) this.#dirty.add(file);
    else this.#request(file);
  }

  /** Closes the worker's connection to the file; resolves once it is closed. */
  close(file: string): Promise<void> {
    this.#dirty.delete(file);
    this.#running.delete(file);
    if (!this.#worker) return Promise.resolve();
    return new Promise((resolve) => {
      this.#closing.set(file, resolve);
      this.#worker!.postMessage({ kind: "close", file });
    });
  }

  #request(file: string): void {
    this.#running.add(file);
    this.#start().postMessage({ kind: "checkpoint", file });
  }

  #start(): Worker {
    if (this.#worker) return this.#worker;
    const driver = createRequire(import.meta.url).resolve("better-sqlite3");
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { driver } });
    worker.on("message", (message: WorkerMessage) => this.#answered(message));
    worker.on("error", (error) => {
      this.#onError("", String(error));
      // A failed worker is replaced on the next write; SQLite's own checkpoints go on meanwhile.
      this.#worker = undefined;
      this.#running.clear();
      for (const resolve of this.#closing.values()) resolve();
      this.#closing.clear();
    });
    // After the listeners: adding a message listener refs the worker's port again.
    worker.unref();
    this.#worker = worker;
    return worker;
  }

  #answered({ kind, file, error }: WorkerMessage): void {
    if (kind === "closed") {
      this.#closing.get(file)?.();
      this.#closing.delete(file);
      return;
    }
    if (error !== undefined) this.#onError(file, error);
    // Closed meanwhile, or nothing written since the pass began: the next write asks again.
    if (!this.#running.has(file)) return;
    if (!this.#dirty.delete(file)) {
      this.#running.delete(file);
      return;
    }
    setTimeout(() => {
      if (this.#running.has(file)) this.#start().postMessage({ kind: "checkpoint", file });
    }, PASS_INTERVAL_MS).unref();
  }
}
