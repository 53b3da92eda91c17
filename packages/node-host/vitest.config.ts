import { defineConfig } from "vitest/config";

// Soak tests (`*.soak.test.ts`) run for minutes: only with WEIR_SOAK set (`pnpm test:soak`).
const soak = process.env.WEIR_SOAK !== undefined;

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    exclude: ["**/node_modules/**", "**/dist/**", ...(soak ? [] : ["**/*.soak.test.ts"])],
  },
});
