#!/usr/bin/env node
// The two commands a new user needs: `npm start` and `npm test`.
// Both bootstrap the pinned pnpm, install from the frozen lockfile and build;
// then `start` runs the example server and `test` runs every check.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const PNPM_VERSION = "10.34.9";
const env = { ...process.env, COREPACK_INTEGRITY_KEYS: "0", TURBO_TELEMETRY_DISABLED: "1" };

// better-sqlite3 compiles from source where no prebuilt binary can be fetched; node-gyp then
// needs Node's headers, which Debian's nodejs package installs under /usr/include/node.
if (!env.npm_config_nodedir && existsSync("/usr/include/node/node.h")) {
  env.npm_config_nodedir = "/usr";
}

function run(cmd, args) {
  const result = spawnSync(cmd, args, { cwd: root, env, stdio: "inherit" });
  if (result.error) throw result.error;
  if (result.status !== 0) process.exit(result.status ?? 1);
}

function pnpm(...args) {
  const local = spawnSync("pnpm", ["--version"], { env, encoding: "utf8" });
  if (local.status === 0 && local.stdout.trim() === PNPM_VERSION) run("pnpm", args);
  else run("npx", ["--yes", `pnpm@${PNPM_VERSION}`, ...args]);
}

const task = process.argv[2];
if (task !== "start" && task !== "test") {
  console.error("usage: node scripts/run.mjs <start|test>");
  process.exit(2);
}

pnpm("install", "--frozen-lockfile");
if (task === "test") {
  pnpm("run", "lint");
  pnpm("exec", "turbo", "run", "build", "test", "--output-logs=errors-only", "--concurrency=1");
} else {
  pnpm("exec", "turbo", "run", "build", "--output-logs=errors-only");
  pnpm("run", "--filter", "@weir/example-todo", "start");
}
