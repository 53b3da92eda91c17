import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium, openTodoPage, waitUntilLive } from "../test/chromium.js";
import { type AppServer, startAppServer, stopAppServer } from "../test/server-process.js";

// The todo app in a real Chromium, served by the example's own server entry (what
// `npm start` runs) over an embedded SQLite file.

const SERVER_ENTRY = fileURLToPath(new URL("../dist/server.js", import.meta.url));

let browser: Browser;
let server: AppServer;
let dataDir: string;
const pageErrors: string[] = [];

beforeAll(async () => {
  if (!existsSync(SERVER_ENTRY)) throw new Error(`build the example first: ${SERVER_ENTRY} is missing`);
  dataDir = mkdtempSync(join(tmpdir(), "weir-todo-"));
  server = await startAppServer(SERVER_ENTRY, { PORT: "0", HOST: "127.0.0.1", WEIR_DATA_DIR: dataDir });
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  if (server) await stopAppServer(server);
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

const openApp = (user: string): Promise<Page> => openTodoPage(browser, server.url, user, pageErrors);

const item = (page: Page, text: string) => page.locator(".todo-list li", { hasText: text });

describe("the todo app in Chromium", () => {
  it("says that development authentication is on", () => {
    expect(server.output()).toMatch(/development authentication/i);
  });

  it("shows a todo added in one window in the other, and keeps it across reloads and restarts", async () => {
    const first = await openApp("alice");
    const second = await openApp("alice");

    await first.locator("form.new-todo input").fill("buy oat milk");
    await first.locator("form.new-todo input").press("Enter");
    await item(first, "buy oat milk").waitFor();
    // Confirmed by the server: the item and the footer say so.
    await first.locator('.todo-list li[data-synced="true"]', { hasText: "buy oat milk" }).waitFor();
    await first.locator('[data-saved="true"]').waitFor();
    // The second window polls only once a minute: the todo arrives because the wake socket
    // told it to pull.
    await item(second, "buy oat milk").waitFor();

    await item(second, "buy oat milk").locator('input[type="checkbox"]').check();
    await first.locator(".todo-list li.done", { hasText: "buy oat milk" }).waitFor();

    // Rename by double-clicking the text.
    await item(first, "buy oat milk").locator(".text").dblclick();
    const edit = first.locator(".todo-list input.edit");
    await edit.fill("buy oat milk and bread");
    await edit.press("Enter");
    await item(second, "buy oat milk and bread").waitFor();

    await second.reload();
    await waitUntilLive(second);
    await item(second, "buy oat milk and bread").waitFor();
    expect(await second.locator(".todo-list li.done").count()).toBe(1);

    // Another user sees none of it. A second window of theirs gets everything it may see in
    // one full pull, so once their own todo shows there, Alice's would have too.
    const stranger = await openApp("mallory");
    await stranger.locator("form.new-todo input").fill("mallory's plan");
    await stranger.locator("form.new-todo input").press("Enter");
    const strangerElsewhere = await openApp("mallory");
    await item(strangerElsewhere, "mallory's plan").waitFor();
    expect(await strangerElsewhere.locator(".todo-list li .text").allTextContents()).toEqual([
      "mallory's plan",
    ]);

    expect(pageErrors).toEqual([]);

    // Restart the server on the same data directory: the todo is in its SQLite file. The open
    // window reconnects its wake socket and keeps syncing.
    await stopAppServer(server);
    const port = new URL(server.url).port;
    server = await startAppServer(SERVER_ENTRY, { PORT: port, HOST: "127.0.0.1", WEIR_DATA_DIR: dataDir });
    const fresh = await openApp("alice");
    await item(fresh, "buy oat milk and bread").waitFor();
    expect(await fresh.locator(".todo-list li .text").allTextContents()).toEqual(["buy oat milk and bread"]);
    expect(await fresh.locator(".todo-list li.done").count()).toBe(1);

    await waitUntilLive(first);
    await fresh.locator("form.new-todo input").fill("call the plumber");
    await fresh.locator("form.new-todo input").press("Enter");
    await item(first, "call the plumber").waitFor();
    expect(await first.locator(".todo-list li .text").allTextContents()).toEqual([
      "buy oat milk and bread",
      "call the plumber",
    ]);

    await item(first, "buy oat milk and bread").locator("button.delete").click();
    await item(fresh, "buy oat milk and bread").waitFor({ state: "detached" });
    expect(await fresh.locator(".todo-list li .text").allTextContents()).toEqual(["call the plumber"]);

    // While the server was down, the open windows' reconnect attempts failed, as they should.
    expect(pageErrors.filter((error) => !/WebSocket connection .* failed/.test(error))).toEqual([]);
  });
});
