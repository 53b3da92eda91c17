// Bundles the browser app (Replicache, the shared mutators, the UI) into dist/public/app.js
// and copies the static page beside it. The server serves dist/public as is.
import { cp, mkdir } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const out = join(root, "dist", "public");

await mkdir(out, { recursive: true });
await cp(join(root, "public"), out, { recursive: true });
await build({
  entryPoints: [join(root, "src", "client", "app.ts")],
  outfile: join(out, "app.js"),
  bundle: true,
  format: "esm",
  platform: "browser",
  target: ["chrome111", "firefox111", "safari16.4"],
  minify: true,
  sourcemap: true,
  legalComments: "linked",
  logLevel: "warning",
});
