import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { launchChromium, openTodoPage, waitUntilLive } from "@weir/example-todo/test/chromium";
import { type AppServer, startAppServer, stopAppServer } from "@weir/example-todo/test/server-process";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mutators, queries, rowsOf, type TodoZero, zeroClient } from "../test/zero-client.js";

// The Zero todo app in a real Chromium: the stock @rocicorp/zero client bundled for the browser
// (IndexedDB store), served with weir's Node host by the example's own server entry (what
// `npm start` runs) over an embedded SQLite file. Another writer is the stock client in Node.

/** The example's server entry, as `npm start` runs it (built by `pnpm build`). */
const SERVER_ENTRY = fileURLToPath(new URL("../dist/server.js", import.meta.url));

interface Todo {
  id: string;
  text: string;
  done: boolean;
}

let browser: Browser;
let server: AppServer;
let dataDir: string;
const pageErrors: string[] = [];
const nodeClients: TodoZero[] = [];

beforeAll(async () => {
  if (!existsSync(SERVER_ENTRY)) throw new Error(`build the example first: ${SERVER_ENTRY} is missing`);
  dataDir = mkdtempSync(join(tmpdir(), "weir-zero-todo-"));
  server = await startAppServer(SERVER_ENTRY, { PORT: "0", HOST: "127.0.0.1", WEIR_DATA_DIR: dataDir });
  browser = await launchChromium();
});

afterAll(async () => {
  await Promise.all(nodeClients.map((z) => z.close()));
  await browser?.close();
  if (server) await stopAppServer(server);
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

const openApp = (user: string): Promise<Page> => openTodoPage(browser, server.url, user, pageErrors);

async function add(page: Page, text: string): Promise<void> {
  await page.locator("form.new-todo input").fill(text);
  await page.locator("form.new-todo input").press("Enter");
}

const item = (page: Page, text: string) => page.locator(".todo-list li", { hasText: text });
const texts = (page: Page) => page.locator(".todo-list li .text").allTextContents();

function nodeClient(user: string): TodoZero {
  const z = zeroClient(`${server.url}/todo`, user, { storageKey: `node-${nodeClients.length}` });
  nodeClients.push(z);
  return z;
}

describe("the Zero todo app in Chromium", () => {
  it("says that development authentication is on", () => {
    expect(server.output()).toMatch(/development authentication/i);
  });

  it("adds, toggles and deletes todos, shows another client's writes, and keeps its data across a reload", async () => {
    const page = await openApp("alice");
    await add(page, "buy oat milk");
    await item(page, "buy oat milk").waitFor();
    // Confirmed by the server (the mutation's `.server` succeeded): the item and footer say so.
    await page.locator('.todo-list li[data-synced="true"]', { hasText: "buy oat milk" }).waitFor();
    await page.locator('[data-saved="true"]').waitFor();

    // The stock client in Node, as the same user: it sees the page's todo, and its own write
    // reaches the page through weir's poke.
    const node = nodeClient("alice");
    await rowsOf<Todo>(node, queries.allTodos(), (rows) => rows.some((row) => row.text === "buy oat milk"));
    expect(
      await node.mutate(
        mutators.createTodo({ id: "from-node", text: "call the plumber", done: false, sort: 100 }),
      ).server,
    ).toEqual({ type: "success" });
    await item(page, "call the plumber").waitFor();
    expect(await texts(page)).toEqual(["buy oat milk", "call the plumber"]);

    // The page's toggle and delete go through the custom mutators and reach the Node client.
    await item(page, "buy oat milk").locator('input[type="checkbox"]').check();
    await page.locator(".todo-list li.done", { hasText: "buy oat milk" }).waitFor();
    await item(page, "call the plumber").locator("button.delete").click();
    await item(page, "call the plumber").waitFor({ state: "detached" });
    const seen = await rowsOf<Todo>(node, queries.allTodos(), (rows) => rows.length === 1 && rows[0]!.done);
    expect(seen.map((row) => row.text)).toEqual(["buy oat milk"]);

    // A second window of another profile gets the same list from the server.
    const other = await openApp("alice");
    await other.locator('.todo-list[data-complete="true"]').waitFor({ state: "attached" });
    expect(await texts(other)).toEqual(["buy oat milk"]);
    expect(await other.locator(".todo-list li.done").count()).toBe(1);

    // Reload: the todos come back, done as they were.
    await page.reload();
    await waitUntilLive(page);
    await page.locator('.todo-list[data-complete="true"]').waitFor({ state: "attached" });
    expect(await texts(page)).toEqual(["buy oat milk"]);
    expect(await page.locator(".todo-list li.done").count()).toBe(1);

    // Another user sees none of it.
    const stranger = await openApp("mallory");
    await stranger.locator('.todo-list[data-complete="true"]').waitFor({ state: "attached" });
    expect(await texts(stranger)).toEqual([]);

    expect(pageErrors).toEqual([]);
  });

  it("keeps a todo added while the server is down, and syncs it once the server is back", async () => {
    const page = await openApp("erin");
    await add(page, "water the plants");
    await page.locator('.todo-list li[data-synced="true"]', { hasText: "water the plants" }).waitFor();

    await stopAppServer(server);
    await page.locator('[data-status]:not([data-status="live"])').waitFor();
    // Written to the browser's store at once, and waiting for the server.
    await add(page, "feed the cat");
    await page.locator('.todo-list li[data-synced="false"]', { hasText: "feed the cat" }).waitFor();

    const port = new URL(server.url).port;
    server = await startAppServer(SERVER_ENTRY, { PORT: port, HOST: "127.0.0.1", WEIR_DATA_DIR: dataDir });
    await waitUntilLive(page);
    await page.locator('.todo-list li[data-synced="true"]', { hasText: "feed the cat" }).waitFor();
    const fresh = await openApp("erin");
    await item(fresh, "feed the cat").waitFor();
    expect(await texts(fresh)).toEqual(["water the plants", "feed the cat"]);
    // The client logs the server's going away (weir closes its sockets with ServerOverloaded,
    // "the server is closing") and its failed attempts to reconnect while the server was down.
    expect(pageErrors.filter((error) => !/WebSocket|the server is closing/.test(error))).toEqual([]);
  });
});
