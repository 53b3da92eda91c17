import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { basename, join, relative, resolve } from "node:path";
import type { Command } from "commander";
import { CliError } from "../cli-error.js";
import { defineAction, type RunState } from "../command-action.js";
import { CONFIG_TEMPLATE } from "../templates/config-template.js";
import { cliVersion } from "../version.js";

const SCRIPT_NAME = "serve";
const GITIGNORE = "# weir's namespace databases\n.data/\n";

interface PackageJson {
  name?: string;
  type?: string;
  scripts?: Record<string, string>;
  [key: string]: unknown;
}

interface Plan {
  configFile: string;
  /** The package.json as it will be written, and whether it is new. */
  pkg: PackageJson;
  pkgIsNew: boolean;
  gitignore: boolean;
}

/**
 * Decides every file before writing any: a refusal leaves the directory untouched. The config is
 * `weir.config.js` in an ES module package, `weir.config.mjs` in a CommonJS one.
 */
function plan(dir: string): Plan {
  const pkgPath = join(dir, "package.json");
  const pkgIsNew = !existsSync(pkgPath);
  let pkg: PackageJson;
  if (pkgIsNew) {
    pkg = {
      name:
        basename(dir)
          .toLowerCase()
          .replace(/[^a-z0-9._-]+/g, "-") || "weir-app",
      private: true,
      type: "module",
      scripts: {},
      dependencies: { "@weir/cli": `^${cliVersion()}` },
    };
  } else {
    try {
      pkg = JSON.parse(readFileSync(pkgPath, "utf8")) as PackageJson;
    } catch (error) {
      throw new CliError(`cannot read ${pkgPath}: ${(error as Error).message}`, "bad_package_json");
    }
  }
  const configFile = pkg.type === "module" ? "weir.config.js" : "weir.config.mjs";
  const existing = ["weir.config.js", "weir.config.mjs", "weir.config.ts", "weir.config.mts"].filter((name) =>
    existsSync(join(dir, name)),
  );
  if (existing.length > 0) {
    throw new CliError(
      `${existing.join(", ")} already exists in ${dir}; weir init never overwrites files`,
      "exists",
    );
  }
  if (pkg.scripts?.[SCRIPT_NAME] !== undefined) {
    throw new CliError(
      `package.json already has a "${SCRIPT_NAME}" script; weir init never overwrites it`,
      "exists",
    );
  }
  const serveCommand = configFile === "weir.config.js" ? "weir serve" : `weir serve --config ${configFile}`;
  pkg.scripts = { ...pkg.scripts, [SCRIPT_NAME]: serveCommand };
  return { configFile, pkg, pkgIsNew, gitignore: !existsSync(join(dir, ".gitignore")) };
}

export function registerInit(program: Command, state: RunState): void {
  const command = program
    .command("init")
    .description(
      "scaffold a weir project: a config with a sample schema, mutators and auth, and a serve script",
    )
    .argument("[dir]", "project directory (created if missing)", ".")
    .addHelpText(
      "after",
      "\nNever overwrites a file: it refuses when a weir config or a serve script exists.",
    );
  defineAction(command, state, async (out, _options, dirArg: string) => {
    const dir = resolve(dirArg);
    if (existsSync(dir) && !statSync(dir).isDirectory())
      throw new CliError(`${dirArg} is not a directory`, "not_dir");
    mkdirSync(dir, { recursive: true });
    const chosen = plan(dir);
    const created: string[] = [];
    // "wx" fails rather than replace a file that appeared since the plan was made.
    writeFileSync(join(dir, chosen.configFile), CONFIG_TEMPLATE, { flag: "wx" });
    created.push(chosen.configFile);
    writeFileSync(join(dir, "package.json"), `${JSON.stringify(chosen.pkg, null, 2)}\n`, {
      flag: chosen.pkgIsNew ? "wx" : "w",
    });
    if (chosen.gitignore) {
      writeFileSync(join(dir, ".gitignore"), GITIGNORE, { flag: "wx" });
      created.push(".gitignore");
    }
    const shown = relative(process.cwd(), dir) || ".";
    out.result(
      {
        dir,
        created: chosen.pkgIsNew ? [...created, "package.json"] : created,
        updated: chosen.pkgIsNew ? [] : ["package.json"],
        script: SCRIPT_NAME,
      },
      (value) =>
        [
          `created ${value.created.join(", ")} in ${shown}`,
          ...(value.updated.length ? [`added a "${SCRIPT_NAME}" script to package.json`] : []),
          "",
          "next:",
          ...(shown === "." ? [] : [`  cd ${shown}`]),
          "  npm install",
          `  npm run ${SCRIPT_NAME}      # weir serve: http://127.0.0.1:4848/<namespace>/...`,
        ].join("\n"),
    );
    return undefined;
  });
}
