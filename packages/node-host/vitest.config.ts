import { configDefaults, defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Soak runs (`*.soak.test.ts`) are long: only `pnpm test:soak` (WEIR_SOAK=1) runs them.
    exclude: process.env.WEIR_SOAK
      ? configDefaults.exclude
      : [...configDefaults.exclude, "**/*.soak.test.ts"],
  },
});
