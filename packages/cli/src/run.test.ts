import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { runWeir } from "../test/weir-process.js";

const version = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")).version;
const COMMANDS = ["init", "serve", "inspect", "maintain", "ingest", "admin", "bench"];

describe("weir", () => {
  it("--version prints the package version and exits 0", async () => {
    const run = await runWeir(["--version"]);
    expect(run.code).toBe(0);
    expect(run.stdout.trim()).toBe(version);
  });

  it("--help lists every command and exits 0", async () => {
    const run = await runWeir(["--help"]);
    expect(run.code).toBe(0);
    for (const command of COMMANDS) expect(run.stdout).toMatch(new RegExp(`^  ${command} `, "m"));
  });

  it.each(COMMANDS)("%s --help describes the command and its --json option, exit 0", async (command) => {
    const run = await runWeir([command, "--help"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`Usage: weir ${command}`);
    if (command !== "serve") expect(run.stdout).toContain("--json");
  });

  it("no command is a usage error: help on stderr, exit 2", async () => {
    const run = await runWeir([]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("Usage: weir");
  });

  it("an unknown command or option is a usage error, exit 2", async () => {
    const unknown = await runWeir(["frobnicate"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("unknown command");
    const option = await runWeir(["inspect", "x.sqlite", "--frob"]);
    expect(option.code).toBe(2);
    expect(option.stderr).toContain("unknown option");
  });

  it("a bad option value is a usage error, exit 2", async () => {
    const run = await runWeir(["bench", "http://127.0.0.1:9/ns", "--clients", "many"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("expected an integer");
  });
});
