import { defineConfig } from "tsup";

export default defineConfig({
  entry: ["src/index.ts", "src/lease.ts", "src/namespace-catalog.ts", "src/namespace-worker.ts"],
  format: ["esm"],
  dts: true,
  clean: true,
  target: "es2022",
});
