import { existsSync } from "node:fs";
import { type Browser, chromium, type Page } from "playwright-core";

/** Debian's Chromium, or the one CHROMIUM_PATH names. */
export const CHROMIUM = process.env.CHROMIUM_PATH || "/usr/bin/chromium";

// A closed network refuses Chromium's own connections; these keep it to the page under test.
const CHROMIUM_FLAGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
];

/** A headless Chromium for a browser test, or an error that says how to get one. */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `Chromium is needed at ${CHROMIUM} for the browser test: run \`node scripts/ensure-chromium.mjs\` ` +
        "at the repository's root (installs Debian's chromium as root), or set CHROMIUM_PATH.",
    );
  }
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_FLAGS });
}

/**
 * A todo page for `user` in a fresh browser profile (its own IndexedDB, so its own client
 * group), once its status says it is live; its page errors and console errors go to `errors`.
 */
export async function openTodoPage(
  browser: Browser,
  url: string,
  user: string,
  errors: string[],
): Promise<Page> {
  const context = await browser.newContext();
  const page = await context.newPage();
  page.on("pageerror", (error) => errors.push(error.message));
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(message.text());
  });
  await page.goto(`${url}/?user=${encodeURIComponent(user)}`);
  await waitUntilLive(page);
  return page;
}

/** Waits until the page says it is live (its sync connection is up). */
export async function waitUntilLive(page: Page): Promise<void> {
  await page.locator('[data-status="live"]').waitFor();
}
