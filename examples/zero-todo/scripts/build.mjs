// Builds the Zero todo app: the browser bundle (the stock @rocicorp/zero client, the named
// queries and mutators, the UI) into dist/public/app.js beside the todo example's page and
// stylesheet, and the server entry into dist/server.js (its config alone into
// dist/zero-config.js). The server serves dist/public as is.
import { copyFile, mkdir, readFile, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const out = join(root, "dist");
const require = createRequire(import.meta.url);

await mkdir(join(out, "public"), { recursive: true });
// The page and its look are the todo example's own, with this example's title and hint.
for (const name of ["styles.css", "favicon.svg"]) {
  await copyFile(require.resolve(`@weir/example-todo/public/${name}`), join(out, "public", name));
}
const page = await readFile(require.resolve("@weir/example-todo/public/index.html"), "utf8");
const retitled = page
  .replace("<title>weir todos</title>", "<title>weir todos on Zero</title>")
  .replace(
    "Open this page in a second window: changes appear in both.",
    "The stock Rocicorp Zero client, synced by weir. Open a second window: changes appear in both.",
  );
if (retitled === page)
  throw new Error("the todo example's page changed: update the Zero example's title and hint");
await writeFile(join(out, "public", "index.html"), retitled);

await build({
  entryPoints: [join(root, "src", "client", "app.ts")],
  outfile: join(out, "public", "app.js"),
  bundle: true,
  format: "esm",
  platform: "browser",
  target: ["chrome111", "firefox111", "safari16.4"],
  minify: true,
  sourcemap: true,
  legalComments: "linked",
  logLevel: "warning",
});

// The server, and its config alone (what a worker thread loads, for the tests of the server
// with workers): the example's TypeScript and the todo example's (which ships as source) are
// bundled; every other package is imported from node_modules at run time.
const sourcePackages = /^@weir\/example-todo(\/|$)/;
await build({
  entryPoints: [join(root, "src", "server.ts"), join(root, "src", "zero-config.ts")],
  outdir: out,
  bundle: true,
  format: "esm",
  platform: "node",
  target: "node20",
  logLevel: "warning",
  plugins: [
    {
      name: "external-packages",
      setup(b) {
        b.onResolve({ filter: /^[^./]/ }, (args) =>
          sourcePackages.test(args.path) ? undefined : { path: args.path, external: true },
        );
      },
    },
  ],
});
