import { defineConfig } from "tsup";

export default defineConfig({
  entry: ["src/server.ts"],
  format: ["esm"],
  target: "node20",
  platform: "node",
  clean: true,
  dts: false,
  // The todo example is shared as TypeScript source: bundle it rather than import it at run time.
  noExternal: ["@weir/example-todo"],
});
