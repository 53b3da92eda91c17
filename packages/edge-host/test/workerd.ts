import { copyFileSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import type { Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import { engineWasmUrl, leanEngineWasmUrl } from "@weir/engine-wasm";
import { build, type Plugin } from "esbuild";
import { Log, LogLevel, Miniflare } from "miniflare";

const here = dirname(fileURLToPath(import.meta.url));
/** The newest date this workerd knows. */
const COMPATIBILITY_DATE = "2026-04-01";

/** The engine's `.wasm` files stay imports, of the compiled modules workerd loads beside the script. */
const wasmModule: Plugin = {
  name: "wasm-module",
  setup(b) {
    b.onResolve({ filter: /\.wasm$/ }, (args) => ({ path: `./${basename(args.path)}`, external: true }));
  },
};

let bundled: Promise<string> | undefined;

/** Bundles test/worker.ts (with the engine's `.wasm` beside it) into a temporary directory, once. */
function bundleTestWorker(): Promise<string> {
  bundled ??= (async () => {
    const dir = mkdtempSync(join(tmpdir(), "weir-edge-worker-"));
    await build({
      entryPoints: [join(here, "worker.ts")],
      outfile: join(dir, "worker.js"),
      bundle: true,
      format: "esm",
      platform: "browser",
      conditions: ["workerd", "worker", "browser"],
      target: "es2022",
      external: ["cloudflare:*"],
      plugins: [wasmModule],
      logLevel: "silent",
    });
    for (const url of [engineWasmUrl, leanEngineWasmUrl])
      copyFileSync(fileURLToPath(url), join(dir, basename(url.pathname)));
    return dir;
  })();
  return bundled;
}

/** What workerd wrote to stdout and stderr. */
export class Output {
  text = "";
}

export interface Workerd {
  mf: Miniflare;
  url: string;
  output: Output;
  dispose(): Promise<void>;
}

/** Starts workerd on the test Worker; `persistDir` keeps the objects' databases across starts. */
export async function startWorkerd(
  options: { persistDir?: string; output?: Output; bindings?: Record<string, string> } = {},
): Promise<Workerd> {
  const dir = await bundleTestWorker();
  const output = options.output ?? new Output();
  const mf = new Miniflare({
    host: "127.0.0.1",
    port: 0,
    modules: true,
    scriptPath: join(dir, "worker.js"),
    modulesRoot: dir,
    modulesRules: [{ type: "CompiledWasm", include: ["**/*.wasm"] }],
    compatibilityDate: COMPATIBILITY_DATE,
    durableObjects: {
      WEIR: { className: "SyncObject", useSQLite: true },
      ALARMED: { className: "AlarmedObject", useSQLite: true },
      PLAIN: { className: "PlainObject", useSQLite: true },
      LEAN_QUERIES: { className: "LeanQueriesObject", useSQLite: true },
    },
    durableObjectsPersist: options.persistDir ?? false,
    bindings: options.bindings ?? {},
    // Clients reach the Worker on its own socket, as on the platform, not through Miniflare's
    // entry proxy (which turns a broken answer into a complete one).
    unsafeDirectSockets: [{ host: "127.0.0.1", port: 0 }],
    log: new Log(LogLevel.WARN),
    handleRuntimeStdio(stdout: Readable, stderr: Readable) {
      stdout.on("data", (chunk: Buffer) => {
        output.text += chunk.toString();
      });
      stderr.on("data", (chunk: Buffer) => {
        output.text += chunk.toString();
      });
    },
  });
  try {
    await mf.ready;
  } catch (error) {
    throw new Error(`workerd did not start: ${String(error)}\n${output.text}`);
  }
  const url = (await mf.unsafeGetDirectURL()).toString().replace(/\/$/, "");
  return { mf, url, output, dispose: () => mf.dispose() };
}

export function tempDir(): string {
  return mkdtempSync(join(tmpdir(), "weir-edge-"));
}
