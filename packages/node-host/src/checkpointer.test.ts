import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { expect, it } from "vitest";
import { tempDir } from "../test/helpers.js";
import { Checkpointer } from "./checkpointer.js";
import { fileStorage } from "./storage.js";

async function until(condition: () => boolean, timeoutMs = 10_000): Promise<boolean> {
  for (let waited = 0; waited < timeoutMs; waited += 20) {
    if (condition()) return true;
    await sleep(20);
  }
  return condition();
}

it("copies committed pages into the database beside the request thread, and lets go on close", async () => {
  const dataDir = tempDir();
  const file = join(dataDir, "pages.sqlite");
  const store = await fileStorage(dataDir).open("pages");
  store.transaction(() => store.db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, data TEXT)", []));
  const initialBytes = statSync(file).size;
  // 300 commits of 2 KB each: about 450 WAL pages, fewer than SQLite's own checkpoint waits for
  // (1,000), so only the background checkpoints move them into the database file.
  for (let i = 0; i < 300; i++) {
    store.transaction(() => store.db.exec("INSERT INTO t (data) VALUES (?)", ["x".repeat(2048)]));
  }
  expect(await until(() => statSync(file).size >= initialBytes + 300 * 2048)).toBe(true);
  expect(store.db.query("SELECT count(*) FROM t", [])).toEqual([[300]]);
  store.close();
  // The last connection to close checkpoints what is left and removes the WAL: the worker's
  // connection closed too.
  expect(await until(() => !existsSync(`${file}-wal`))).toBe(true);
});

it("answers every close of a file, also one asked before the worker answered the one before", async () => {
  // A namespace moving between workers can close, open and close again in the same worker
  // before its checkpoint thread answered the first close; a close left unanswered held the
  // server's shutdown for ever.
  const dataDir = tempDir();
  const file = join(dataDir, "twice.sqlite");
  const checkpointer = new Checkpointer(() => {});
  const store = await fileStorage(dataDir).open("twice");
  store.transaction(() => store.db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY)", []));
  store.close();
  checkpointer.written(file);
  const answered: string[] = [];
  const first = checkpointer.close(file).then(() => answered.push("first"));
  const second = checkpointer.close(file).then(() => answered.push("second"));
  const timeout = sleep(5_000).then(() => "timed out");
  expect(await Promise.race([Promise.all([first, second]).then(() => "both"), timeout])).toBe("both");
  expect(answered).toEqual(["first", "second"]);
});
