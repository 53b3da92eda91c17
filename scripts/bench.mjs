#!/usr/bin/env node
// `pnpm bench <suite>`: runs one benchmark suite. A suite is `bench/<suite>.mjs` at the root or
// `packages/<package>/bench/<suite>.mjs`; its last line of output is one JSON object.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const suite = process.argv[2];

function candidates(name) {
  const found = [join(root, "bench", `${name}.mjs`)];
  for (const pkg of readdirSync(join(root, "packages")))
    found.push(join(root, "packages", pkg, "bench", `${name}.mjs`));
  return found.filter((file) => existsSync(file));
}

function suites() {
  const names = new Set();
  const dirs = [
    join(root, "bench"),
    ...readdirSync(join(root, "packages")).map((pkg) => join(root, "packages", pkg, "bench")),
  ];
  for (const dir of dirs) {
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
