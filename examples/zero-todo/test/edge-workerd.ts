import { copyFileSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { engineWasmUrl } from "@weir/engine-wasm";
import { build } from "esbuild";
import { Log, LogLevel, Miniflare } from "miniflare";

const here = dirname(fileURLToPath(import.meta.url));

/** The Workers the tests run: the todo app's, and the issue tracker's (test/edge-issues-worker.ts). */
export type EdgeApp = "todo" | "issues";

const ENTRIES: Record<EdgeApp, string> = { todo: "edge-worker.ts", issues: "edge-issues-worker.ts" };

const bundled = new Map<EdgeApp, Promise<string>>();

/** Bundles the app's Worker, with the engine's `.wasm` beside it as a module, once. */
function bundle(app: EdgeApp): Promise<string> {
  let pending = bundled.get(app);
  if (pending) return pending;
  pending = (async () => {
    const dir = mkdtempSync(join(tmpdir(), "weir-zero-edge-"));
    await build({
      entryPoints: [join(here, ENTRIES[app])],
      outfile: join(dir, "worker.js"),
      bundle: true,
      format: "esm",
      platform: "browser",
      conditions: ["workerd", "worker", "browser"],
      target: "es2022",
      external: ["cloudflare:*"],
      plugins: [
        {
          name: "wasm-module",
          setup(b) {
            b.onResolve({ filter: /\.wasm$/ }, () => ({ path: "./engine.wasm", external: true }));
          },
        },
      ],
      logLevel: "silent",
    });
    copyFileSync(fileURLToPath(engineWasmUrl), join(dir, "engine.wasm"));
    return dir;
  })();
  bundled.set(app, pending);
  return pending;
}

export interface EdgeWorkerd {
  /** The Worker's own socket, e.g. `http://127.0.0.1:PORT`. */
  url: string;
  port: number;
  dispose(): Promise<void>;
}

/**
 * An app's Worker (`app`, the todo app's by default) in real workerd (Miniflare), reached on the
 * Worker's own socket (`port`: the one a restart takes again). `persistDir` keeps the objects'
 * databases across starts; `bindings` are the Worker's text bindings (see test/edge-worker.ts).
 */
export async function startEdgeWorkerd(
  options: { persistDir?: string; port?: number; bindings?: Record<string, string>; app?: EdgeApp } = {},
): Promise<EdgeWorkerd> {
  const dir = await bundle(options.app ?? "todo");
  const mf = new Miniflare({
    host: "127.0.0.1",
    port: 0,
    modules: true,
    scriptPath: join(dir, "worker.js"),
    modulesRoot: dir,
    modulesRules: [{ type: "CompiledWasm", include: ["**/*.wasm"] }],
    compatibilityDate: "2026-04-01",
    durableObjects: { WEIR: { className: "SyncObject", useSQLite: true } },
    bindings: options.bindings ?? {},
    durableObjectsPersist: options.persistDir ?? false,
    unsafeDirectSockets: [{ host: "127.0.0.1", port: options.port ?? 0 }],
    log: new Log(LogLevel.WARN),
    handleRuntimeStdio() {
      // The request log; the tests read the sockets instead.
    },
  });
  await mf.ready;
  const url = (await mf.unsafeGetDirectURL()).toString().replace(/\/$/, "");
  return { url, port: Number(new URL(url).port), dispose: () => mf.dispose() };
}

export function tempDir(): string {
  return mkdtempSync(join(tmpdir(), "weir-zero-edge-data-"));
}
