import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    // A real server and stock clients: generous per-test limits, one file at a time on small machines.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    fileParallelism: false,
  },
});
