// Builds the Zero todo app: the browser bundle (the stock @rocicorp/zero client, the named
// queries and mutators, the UI) into dist/public/app.js beside the page and the todo example's
// stylesheet, and the server entry into dist/server.js. The server serves dist/public as is.
import { copyFile, cp, mkdir } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const out = join(root, "dist");
const require = createRequire(import.meta.url);

await mkdir(join(out, "public"), { recursive: true });
await cp(join(root, "public"), join(out, "public"), { recursive: true });
// The look is the todo example's own.
for (const name of ["styles.css", "favicon.svg"]) {
  await copyFile(require.resolve(`@weir/example-todo/public/${name}`), join(out, "public", name));
}

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

// The server: the example's TypeScript and the todo example's (which ships as source) are
// bundled; every other package is imported from node_modules at run time.
const sourcePackages = /^@weir\/example-todo(\/|$)/;
await build({
  entryPoints: [join(root, "src", "server.ts")],
  outfile: join(out, "server.js"),
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
