import { defineConfig } from "tsup";

export default defineConfig({
  entry: ["src/index.ts", "src/lean.ts"],
  format: ["esm"],
  dts: true,
  clean: true,
  target: "es2022",
  // The engine stays an import of its `.wasm`, which the Worker's bundler turns into a compiled module.
  external: [/\.wasm$/],
});
