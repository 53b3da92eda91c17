import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// Proves that each public package's `files` and `exports` ship what runs (the engine's .wasm
// included): pack them as they would be published, install the tarballs with npm into a
// project outside the workspace, and use them from there.

const root = fileURLToPath(new URL("../..", import.meta.url));
const work = mkdtempSync(join(tmpdir(), "weir-pack-"));
const app = join(work, "app");

interface Manifest {
  name: string;
  private?: boolean;
  bin?: Record<string, string>;
  exports?: Record<string, unknown>;
}

// Packages that run in Workers import the engine's .wasm as a module, which only a bundler
// (wrangler's esbuild) resolves: they are bundled, not imported by Node.
const WORKER_PACKAGES = ["@weir/edge-host"];

const packages = readdirSync(join(root, "packages"))
  .map((dir) => ({ dir: join(root, "packages", dir), manifest: readManifest(join(root, "packages", dir)) }))
  .filter(
    (pkg): pkg is { dir: string; manifest: Manifest } => pkg.manifest !== null && !pkg.manifest.private,
  );

function readManifest(dir: string): Manifest | null {
  try {
    return JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as Manifest;
  } catch {
    return null;
  }
}

const run = (command: string, args: string[], cwd: string) =>
  execFileSync(command, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });

beforeAll(() => {
  const tarballs: Record<string, string> = {};
  for (const { dir, manifest } of packages) {
    const output = run("pnpm", ["pack", "--pack-destination", work], dir);
    const tarball = output.trim().split("\n").pop()!.trim();
    tarballs[manifest.name] = `file:${tarball}`;
  }
  execFileSync("mkdir", ["-p", app]);
  writeFileSync(
    join(app, "package.json"),
    JSON.stringify({
      name: "weir-packaging-check",
      private: true,
      type: "module",
      dependencies: tarballs,
      overrides: tarballs,
    }),
  );
  run("npm", ["install", "--no-audit", "--no-fund", "--ignore-scripts"], app);
});

afterAll(() => rmSync(work, { recursive: true, force: true }));

describe("published packages", () => {
  it("include every public package, each built before this test runs", () => {
    const names = packages.map((pkg) => pkg.manifest.name);
    expect(names).toEqual(expect.arrayContaining(["@weir/protocol", "@weir/engine-wasm"]));
    // turbo builds this test's workspace dependencies first: every public package must be one.
    const own = JSON.parse(readFileSync(new URL("package.json", import.meta.url), "utf8"));
    const workspace = Object.keys(own.devDependencies).filter((dep) => dep.startsWith("@weir/"));
    expect(workspace.sort()).toEqual([...names].sort());
  });

  it("import every entry point of their exports maps", () => {
    const entries = packages
      .filter(({ manifest }) => !WORKER_PACKAGES.includes(manifest.name))
      .flatMap(({ manifest }) =>
        Object.entries(manifest.exports ?? {})
          .filter(
            ([subpath, target]) =>
              !subpath.endsWith(".json") && !subpath.endsWith(".wasm") && typeof target === "object",
          )
          .map(([subpath]) => manifest.name + subpath.slice(1)),
      );
    const script = `for (const entry of ${JSON.stringify(entries)}) { const m = await import(entry); if (Object.keys(m).length === 0) throw new Error(entry + " exports nothing"); } console.log("imported", ${entries.length});`;
    expect(run("node", ["--input-type=module", "-e", script], app).trim()).toBe(`imported ${entries.length}`);
  });

  it("bundle the Worker packages as wrangler does, the engine's .wasm included", async () => {
    for (const name of WORKER_PACKAGES) {
      const outdir = join(work, "bundle", name.replace("/", "_"));
      const result = await build({
        stdin: { contents: `export * from ${JSON.stringify(name)};`, resolveDir: app, loader: "js" },
        bundle: true,
        format: "esm",
        platform: "neutral",
        conditions: ["workerd", "worker", "import"],
        mainFields: ["module", "main"],
        loader: { ".wasm": "copy" },
        outdir,
        metafile: true,
        logLevel: "silent",
      });
      const outputs = Object.keys(result.metafile.outputs);
      expect(outputs.some((file) => file.endsWith(".wasm"))).toBe(true);
      expect(Object.keys(result.metafile.inputs)).toContainEqual(
        expect.stringContaining(`node_modules/${name}/dist/`),
      );
    }
  });

  it("load the engine from the shipped .wasm and answer a pull", () => {
    const script = `
      import { readFile } from "node:fs/promises";
      import initSqlJs from "sql.js";
      import { Engine, engineWasmUrl } from "@weir/engine-wasm";
      import { sqlJsAdapter } from "@weir/engine-wasm/sql-js";
      const engine = await Engine.load(await readFile(engineWasmUrl));
      const db = sqlJsAdapter(new (await initSqlJs()).Database());
      engine.install(db, { tables: { t: { columns: { id: "string" }, primaryKey: ["id"] } } });
      console.log(engine.pull(db, { clientGroupID: "g", userID: "u", cookie: null }).body);`;
    run("npm", ["install", "--no-audit", "--no-fund", "--ignore-scripts", "sql.js@1.17.0"], app);
    expect(JSON.parse(run("node", ["--input-type=module", "-e", script], app))).toEqual({
      cookie: 0,
      lastMutationIDChanges: {},
      rowsPatch: [{ op: "clear" }],
    });
  });

  it("run the CLIs they ship", () => {
    const withBins = packages.filter(({ manifest }) => manifest.bin);
    for (const { manifest } of withBins) {
      for (const bin of Object.keys(manifest.bin ?? {})) {
        expect(run(join(app, "node_modules", ".bin", bin), ["--version"], app).trim()).toMatch(
          /^\d+\.\d+\.\d+/,
        );
      }
    }
  });
});
