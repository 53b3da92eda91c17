import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Miniflare } from "miniflare";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

/** Bundles the Worker as a deploy would (`wrangler deploy --dry-run`) into a new directory. */
export function bundleWorker(): { outdir: string; sizes: Record<string, number> } {
  const outdir = mkdtempSync(join(tmpdir(), "weir-cloudflare-"));
  const wrangler = spawnSync("pnpm", ["exec", "wrangler", "deploy", "--dry-run", "--outdir", outdir], {
    cwd: root,
    encoding: "utf8",
    env: { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "true" },
  });
  if (wrangler.status !== 0) throw new Error(`wrangler failed:\n${wrangler.stdout}\n${wrangler.stderr}`);
  const files = readdirSync(outdir).filter((file) => !file.endsWith(".map") && !file.endsWith(".md"));
  return {
    outdir,
    sizes: Object.fromEntries(files.map((file) => [file, statSync(join(outdir, file)).size])),
  };
}

/** Serves a bundle in workerd, with the Worker's vars and secrets as `bindings`. */
export async function startWorker(
  outdir: string,
  options: { bindings?: Record<string, string>; port?: number } = {},
): Promise<{ mf: Miniflare; url: string }> {
  const mf = new Miniflare({
    host: "127.0.0.1",
    port: options.port ?? 0,
    modules: true,
    scriptPath: join(outdir, "worker.js"),
    modulesRoot: outdir,
    modulesRules: [{ type: "CompiledWasm", include: ["**/*.wasm"] }],
    compatibilityDate: "2026-04-01",
    durableObjects: { WEIR: { className: "SyncObject", useSQLite: true } },
    bindings: options.bindings ?? {},
    // workerd blocks once a pipe it logs to is full: drain both.
    handleRuntimeStdio(stdout, stderr) {
      stdout.resume();
      stderr.resume();
    },
  });
  return { mf, url: (await mf.ready).toString().replace(/\/$/, "") };
}
