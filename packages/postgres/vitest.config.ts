import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    // Every test file runs a PostgreSQL cluster of its own and real replication.
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
