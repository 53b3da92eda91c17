import { defineConfig } from "tsup";

export default defineConfig({
  entry: ["src/weir.ts", "src/index.ts", "src/serve-worker-config.ts"],
  format: ["esm"],
  dts: { entry: "src/index.ts" },
  clean: true,
  target: "es2022",
});
