import { existsSync } from "node:fs";
import { extname, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { CliError } from "./cli-error.js";

/** Looked for, in this order, when no `--config` is given. */
const DEFAULT_CONFIG_FILES = ["weir.config.ts", "weir.config.mts", "weir.config.js", "weir.config.mjs"];

const TYPESCRIPT = new Set([".ts", ".mts", ".cts"]);

/** The config file to use: the given one, or the first default one in `cwd`. */
export function findConfigFile(given: string | undefined, cwd = process.cwd()): string {
  if (given) {
    const path = resolve(cwd, given);
    if (!existsSync(path)) throw new CliError(`config file not found: ${given}`, "config_not_found");
    return path;
  }
  for (const name of DEFAULT_CONFIG_FILES) {
    const path = resolve(cwd, name);
    if (existsSync(path)) return path;
  }
  throw new CliError(
    `no config file: pass --config or create one of ${DEFAULT_CONFIG_FILES.join(", ")} (weir init writes one)`,
    "config_not_found",
  );
}

/**
 * Loads a config module and answers its default export (or the module itself when it has
 * none). JavaScript loads through Node's own `import`; TypeScript through jiti, which
 * transpiles it on the fly, so that no build step is needed.
 */
export async function loadConfigFile(path: string): Promise<Record<string, unknown>> {
  let loaded: unknown;
  try {
    if (TYPESCRIPT.has(extname(path))) {
      const { createJiti } = await import("jiti");
      const jiti = createJiti(import.meta.url, { moduleCache: false });
      loaded = await jiti.import(path, { default: true });
    } else {
      const module = (await import(pathToFileURL(path).href)) as { default?: unknown };
      loaded = module.default ?? module;
    }
  } catch (error) {
    throw new CliError(`cannot load config ${path}: ${(error as Error).message}`, "config_load_failed");
  }
  if (typeof loaded === "function") loaded = await (loaded as () => unknown)();
  if (loaded === null || typeof loaded !== "object") {
    throw new CliError(
      `config ${path} must export an object (export default { schema, mutators, ... })`,
      "bad_config",
    );
  }
  return loaded as Record<string, unknown>;
}
