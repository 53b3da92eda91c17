import { defineConfig } from "tsup";

// The server entry; the browser bundle is built by scripts/build-client.mjs.
export default defineConfig({
  entry: ["src/server.ts"],
  format: ["esm"],
  target: "node20",
  platform: "node",
  clean: true,
  dts: false,
});
