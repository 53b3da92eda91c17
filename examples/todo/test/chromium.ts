import { existsSync } from "node:fs";
import { type Browser, chromium } from "playwright-core";

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
