import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";

/** How long after a pass the next one may start while writes go on. */
const PASS_INTERVAL_MS = 10;

/** How many of the problems quick_check finds are reported: the first tells enough. */
const MAX_REPORTED_PROBLEMS = 5;

/**
 * The worker's code. It keeps a connection per namespace file and runs passive checkpoints on
 * request: they copy committed pages from the WAL into the database (and sync both) without
 * blocking the server's connection, which only ever writes. It also checks a file's integrity
 * (PRAGMA quick_check) on a read-only connection of its own, before the server opens the file.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.driver);
const open = new Map();
parentPort.on("message", ({ kind, file, id }) => {
  if (kind === "check") {
    let problems;
    let error;
    try {
      const db = new Database(file, { readonly: true, fileMustExist: true });
      try {
        problems = db.pragma("quick_check(${MAX_REPORTED_PROBLEMS})", { simple: false }).map((row) => row.quick_check);
      } finally {
        db.close();
      }
    } catch (caught) {
      error = String(caught.message);
    }
    parentPort.postMessage({ kind: "checked", file, id, problems, error });
    return;
  }
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
  kind: "done" | "closed" | "checked";
  file: string;
  error?: string;
  id?: number;
  problems?: string[];
}

/** A file's integrity: "ok", or what SQLite found wrong with it. */
export type Integrity = { ok: true } | { ok: false; problem: string };

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
  /**
   * Closes awaiting the worker's answer, by file, in the order they were asked: a namespace may
   * close, open and close again before the worker answered the first, and each close is
   * answered in turn.
   */
  readonly #closing = new Map<string, Array<() => void>>();
  readonly #checks = new Map<number, (integrity: Integrity) => void>();
  #nextCheck = 0;
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
      const waiting = this.#closing.get(file);
      if (waiting) waiting.push(resolve);
      else this.#closing.set(file, [resolve]);
      this.#awaited();
      this.#worker!.postMessage({ kind: "close", file });
    });
  }

  /**
   * Checks the file with SQLite's quick_check (every page and index, without comparing index
   * contents with their tables) in the worker, so that a large file's check never holds up the
   * requests of other namespaces.
   */
  integrity(file: string): Promise<Integrity> {
    const id = this.#nextCheck++;
    return new Promise((resolve) => {
      this.#checks.set(id, resolve);
      this.#start().postMessage({ kind: "check", file, id });
      this.#awaited();
    });
  }

  /**
   * The worker keeps the process alive only while a close or a check awaits its answer, so a
   * shutdown that waits for one does not find the event loop empty and exit first.
   */
  #awaited(): void {
    if (this.#closing.size > 0 || this.#checks.size > 0) this.#worker?.ref();
    else this.#worker?.unref();
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
      for (const waiting of this.#closing.values()) for (const resolve of waiting) resolve();
      this.#closing.clear();
      for (const resolve of this.#checks.values())
        resolve({ ok: false, problem: `the check failed: ${error}` });
      this.#checks.clear();
    });
    // After the listeners: adding a message listener refs the worker's port again.
    worker.unref();
    this.#worker = worker;
    return worker;
  }

  #answered({ kind, file, error, id, problems }: WorkerMessage): void {
    if (kind === "checked") {
      const resolve = this.#checks.get(id!);
      this.#checks.delete(id!);
      this.#awaited();
      const found = error ?? problems?.filter((line) => line !== "ok").join("; ");
      resolve?.(found ? { ok: false, problem: found } : { ok: true });
      return;
    }
    if (kind === "closed") {
      const waiting = this.#closing.get(file);
      const resolve = waiting?.shift();
      if (waiting?.length === 0) this.#closing.delete(file);
      this.#awaited();
      resolve?.();
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
