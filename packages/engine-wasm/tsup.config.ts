import { defineConfig } from "tsup";

export default defineConfig({
  entry: ["src/index.ts", "src/better-sqlite3-adapter.ts", "src/sql-js-adapter.ts"],
  format: ["esm"],
  dts: true,
  clean: true,
  target: "es2022",
});
