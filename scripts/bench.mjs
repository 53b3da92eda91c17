#!/usr/bin/env node
// `pnpm bench <suite>`: runs one benchmark suite. A suite is `bench/<suite>.mjs` at the root or
// `packages/<package>/bench/<suite>.mjs` (or `examples/<example>/bench/<suite>.mjs`); its last
// line of output is one JSON object.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const suite = process.argv[2];

/** The folders a suite may be in: the root's bench/, then each package's and each example's. */
function benchDirs() {
  const dirs = [join(root, "bench")];
  for (const parent of ["packages", "examples"])
    for (const name of readdirSync(join(root, parent))) dirs.push(join(root, parent, name, "bench"));
  return dirs;
}

function candidates(name) {
  return benchDirs()
    .map((dir) => join(dir, `${name}.mjs`))
    .filter((file) => existsSync(file));
}

function suites() {
  const names = new Set();
  for (const dir of benchDirs()) {
    if (!existsSync(dir)) continue;
    for (const file of readdirSync(dir)) if (file.endsWith(".mjs")) names.add(file.slice(0, -4));
  }
  return [...names].sort();
}

const [file] = suite ? candidates(suite) : [];
if (!file) {
  console.error(`usage: pnpm bench <suite>   (suites: ${suites().join(", ") || "none"})`);
  process.exit(2);
}
const result = spawnSync(process.execPath, ["--expose-gc", file, ...process.argv.slice(3)], {
  cwd: dirname(file),
  stdio: "inherit",
});
process.exit(result.status ?? 1);
