import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    // Every command runs as a child process against real files and servers.
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
