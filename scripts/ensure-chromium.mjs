#!/usr/bin/env node
// The browser tests drive a real Chromium through playwright-core, which cannot download a
// browser of its own here. This makes sure one is installed: on Debian, running as root, it
// installs the distribution's `chromium`; anywhere else it says what to do and fails.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";

const path = process.env.CHROMIUM_PATH || "/usr/bin/chromium";

if (existsSync(path)) process.exit(0);

const isRoot = typeof process.getuid === "function" && process.getuid() === 0;
const hasApt = existsSync("/usr/bin/apt-get");

if (!process.env.CHROMIUM_PATH && isRoot && hasApt) {
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  const install = () => spawnSync("apt-get", ["install", "-y", "chromium"], { env, stdio: "inherit" });
  console.log("Chromium is missing; installing Debian's chromium for the browser tests.");
  // A fresh machine may have empty package lists: refresh them once and try again.
  if (install().status !== 0) {
    spawnSync("apt-get", ["update"], { env, stdio: "inherit" });
    install();
  }
  if (existsSync(path)) process.exit(0);
}

console.error(
  [
    `The browser tests need Chromium at ${path}, and it is not there.`,
    "On Debian or Ubuntu: apt-get install -y chromium (as root).",
    "Elsewhere: install Chromium or Chrome and set CHROMIUM_PATH to its executable.",
  ].join("\n"),
);
process.exit(1);
