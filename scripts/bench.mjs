#!/usr/bin/env node
// `pnpm bench <suite> [args...]` runs bench/<suite>.mjs in its own process. Each suite prints
// what it measured and, as its last line, one JSON object with its figures.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const benchDir = join(root, "bench");
const suites = existsSync(benchDir)
  ? readdirSync(benchDir)
      .filter((name) => name.endsWith(".mjs") && !name.includes(".config."))
      .map((name) => name.slice(0, -".mjs".length))
      .sort()
  : [];

const [suite, ...args] = process.argv.slice(2);
if (!suite || !suites.includes(suite)) {
  console.error(`usage: pnpm bench <suite> [args...]\nsuites: ${suites.join(", ") || "(none)"}`);
  process.exit(2);
}

const result = spawnSync(process.execPath, [join(benchDir, `${suite}.mjs`), ...args], {
  cwd: root,
  stdio: "inherit",
});
if (result.error) throw result.error;
process.exit(result.status ?? 1);
