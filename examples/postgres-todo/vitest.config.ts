import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    // Each file starts a PostgreSQL cluster of its own, a server and (one of them) a browser:
    // generous per-test limits, one file at a time on small machines.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    fileParallelism: false,
  },
});
