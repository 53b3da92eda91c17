import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { launchChromium, openTodoPage } from "@weir/example-todo/test/chromium";
import { startPostgres, type TestPostgres } from "@weir/postgres-testing";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { todoTableRows } from "../test/todo-table-rows.js";

// The todo page in a real Chromium, served by the example's own entry (what `npm start` runs)
// against a private PostgreSQL cluster: rows written to PostgreSQL appear in the page, and the
// page's todos are written to PostgreSQL by the app server before they show as saved.

const SERVER_ENTRY = fileURLToPath(new URL("../dist/server.js", import.meta.url));

let browser: Browser;
let db: TestPostgres;
let dataDir: string;
let server: ChildProcess;
let url: string;
let output = "";
const pageErrors: string[] = [];

/** Starts `node dist/server.js` and waits for the line that says where weir listens. */
function startServer(env: Record<string, string>): Promise<string> {
  server = spawn(process.execPath, [SERVER_ENTRY], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /weir listening on (http:\/\/\S+)/.exec(output);
      if (match) resolve(match[1]!.replace(/\/$/, ""));
    };
    server.stdout?.on("data", onData);
    server.stderr?.on("data", onData);
    server.on("exit", (code) =>
      reject(new Error(`the server exited with ${code} before listening:\n${output}`)),
    );
  });
}

beforeAll(async () => {
  if (!existsSync(SERVER_ENTRY)) throw new Error(`build the example first: ${SERVER_ENTRY} is missing`);
  db = await startPostgres();
  dataDir = mkdtempSync(join(tmpdir(), "postgres-todo-browser-"));
  url = await startServer({
    PORT: "0",
    APP_PORT: "0",
    HOST: "127.0.0.1",
    DATABASE_URL: db.url,
    WEIR_DATA_DIR: dataDir,
  });
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  if (server && server.exitCode === null) {
    await new Promise<void>((resolve) => {
      server.once("exit", () => resolve());
      server.kill("SIGTERM");
    });
  }
  await db?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

const openApp = (user: string): Promise<Page> => openTodoPage(browser, url, user, pageErrors);

const item = (page: Page, text: string) => page.locator(".todo-list li", { hasText: text });

describe("the todo page over PostgreSQL, in Chromium", () => {
  it("shows rows written to PostgreSQL, and writes the page's todos to PostgreSQL before showing them saved", async () => {
    const first = await openApp("alice");
    const second = await openApp("alice");

    // An outside writer: the row reaches the open page through replication and the wake socket.
    await db.sql(
      "INSERT INTO todo (id, owner, text, done, sort) VALUES ('psql-1', 'alice', 'inserted with psql', false, 1)",
    );
    await item(first, "inserted with psql").waitFor();
    await item(second, "inserted with psql").waitFor();

    await first.locator("form.new-todo input").fill("made in the page");
    await first.locator("form.new-todo input").press("Enter");
    await first.locator('.todo-list li[data-synced="true"]', { hasText: "made in the page" }).waitFor();
    await first.locator('[data-saved="true"]').waitFor();
    // Saved means written by the app server: the row is in the table, as the caller's.
    const rows = await todoTableRows(db, "alice");
    expect(rows.map(({ owner, text, done, sort }) => ({ owner, text, done, sort }))).toEqual([
      { owner: "alice", text: "inserted with psql", done: false, sort: 1 },
      { owner: "alice", text: "made in the page", done: false, sort: 2 },
    ]);
    await item(second, "made in the page").waitFor();

    // Ticked in one window: PostgreSQL has it, and the other window shows it.
    await item(second, "inserted with psql").locator('input[type="checkbox"]').check();
    await first.locator(".todo-list li.done", { hasText: "inserted with psql" }).waitFor();
    await second.locator('[data-saved="true"]').waitFor();
    expect((await db.sql("SELECT done FROM todo WHERE id = 'psql-1'")).rows).toEqual([{ done: true }]);

    // Deleted from outside: gone from both pages.
    await db.sql("DELETE FROM todo WHERE text = 'made in the page'");
    await item(first, "made in the page").waitFor({ state: "detached" });
    await item(second, "made in the page").waitFor({ state: "detached" });

    // Another user sees none of Alice's rows.
    const mallory = await openApp("mallory");
    await mallory.locator("form.new-todo input").fill("mallory's plan");
    await mallory.locator("form.new-todo input").press("Enter");
    await mallory.locator('[data-saved="true"]').waitFor();
    await mallory.locator('.todo-list li[data-synced="true"]', { hasText: "mallory's plan" }).waitFor();
    expect(await mallory.locator(".todo-list li .text").allTextContents()).toEqual(["mallory's plan"]);
    expect(await first.locator(".todo-list li .text").allTextContents()).toEqual(["inserted with psql"]);

    expect(pageErrors).toEqual([]);
  });
});
