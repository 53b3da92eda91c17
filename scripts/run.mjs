#!/usr/bin/env node
// The two commands a new user needs: `npm start` and `npm test`.
// Both bootstrap the pinned pnpm, install from the frozen lockfile and build;
// then `start` runs the example server and `test` runs every check.
import { spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { stripVTControlCharacters } from "node:util";

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

function pnpmCommand(args) {
  const local = spawnSync("pnpm", ["--version"], { env, encoding: "utf8" });
  if (local.status === 0 && local.stdout.trim() === PNPM_VERSION) return ["pnpm", args];
  return ["npx", ["--yes", `pnpm@${PNPM_VERSION}`, ...args]];
}

function pnpm(...args) {
  run(...pnpmCommand(args));
}

// Runs every package's tests through turbo (cached results replay their logs), passes the
// output through, and closes with one line that totals the vitest summaries.
function testAll() {
  const [cmd, args] = pnpmCommand([
    "exec",
    "turbo",
    "run",
    "build",
    "test",
    "--output-logs=full",
    "--concurrency=2",
    // A failing package does not stop the others: one run shows every failure.
    "--continue",
  ]);
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: root, env, stdio: ["ignore", "pipe", "inherit"] });
    let tail = "";
    const totals = { passed: 0, failed: 0, skipped: 0 };
    child.stdout.on("data", (chunk) => {
      process.stdout.write(chunk);
      const lines = (tail + chunk.toString("utf8")).split("\n");
      tail = lines.pop() ?? "";
      for (const line of lines) {
        const plain = stripVTControlCharacters(line);
        if (!/\bTests\s+\d/.test(plain)) continue;
        for (const [, count, kind] of plain.matchAll(/(\d+) (passed|failed|skipped)/g))
          totals[kind] += Number(count);
      }
    });
    child.on("close", (code) => {
      console.log(`\n${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped`);
      resolve(code ?? 1);
    });
  });
}

const task = process.argv[2];
if (task !== "start" && task !== "test") {
  console.error("usage: node scripts/run.mjs <start|test>");
  process.exit(2);
}

pnpm("install", "--frozen-lockfile");
if (task === "test") {
  pnpm("run", "lint");
  process.exitCode = await testAll();
} else {
  pnpm("exec", "turbo", "run", "build", "--output-logs=errors-only");
  pnpm("run", "--filter", "@weir/example-todo", "start");
}
