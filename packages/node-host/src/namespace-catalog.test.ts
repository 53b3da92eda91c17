import { join } from "node:path";
import { Worker } from "node:worker_threads";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { tempDir } from "../test/helpers.js";
import { CATALOG_FILE, NamespaceCatalog } from "./namespace-catalog.js";

// Every worker thread opens the catalog; the first turns it to WAL under an exclusive lock. One
// that opens it meanwhile waits for the lock instead of failing its request with "database is
// locked" (seen once as a 500 when two workers opened it together).

const workers: Worker[] = [];
afterEach(async () => {
  for (const worker of workers.splice(0)) await worker.terminate();
});

/** A thread that holds an exclusive lock on `file` for `ms`, answering "locked" once it has it. */
function holdLock(file: string, ms: number): Promise<Worker> {
  const worker = new Worker(
    `const Database = require(${JSON.stringify(require.resolve("better-sqlite3"))});
     const { parentPort, workerData } = require("node:worker_threads");
     const db = new Database(workerData.file);
     db.exec("BEGIN EXCLUSIVE");
     parentPort.postMessage("locked");
     setTimeout(() => { db.exec("COMMIT"); db.close(); parentPort.postMessage("released"); }, workerData.ms);`,
    { eval: true, workerData: { file, ms } },
  );
  workers.push(worker);
  return new Promise((resolve, reject) => {
    worker.once("message", () => resolve(worker));
    worker.once("error", reject);
  });
}

describe("the namespace catalog", () => {
  it("opens while another thread holds the file's lock, once the lock is released", async () => {
    const dataDir = tempDir();
    const file = join(dataDir, CATALOG_FILE);
    // A file not yet in WAL, as the first thread to open it finds it.
    new Database(file).close();
    const holder = await holdLock(file, 300);
    const released = new Promise((resolve) => holder.once("message", resolve));
    const catalog = NamespaceCatalog.open(dataDir);
    await released;
    expect(catalog.db.pragma("journal_mode", { simple: true })).toBe("wal");
    catalog.db.close();
  });
});
