import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

/** The built command, run as a user runs it: `node dist/weir.js ...`. */
const WEIR_BIN = fileURLToPath(new URL("../dist/weir.js", import.meta.url));

export interface WeirRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface WeirRunOptions {
  cwd?: string;
  env?: Record<string, string | undefined>;
}

function childEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  // A test must not inherit an operator's key, nor a terminal that would turn on progress lines.
  const { WEIR_ADMIN_KEY: _key, ...rest } = process.env;
  return { ...rest, NO_COLOR: "1", ...extra };
}

/** Runs `weir <args>` to completion. */
export function runWeir(args: readonly string[], options: WeirRunOptions = {}): Promise<WeirRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [WEIR_BIN, ...args], {
      cwd: options.cwd,
      env: childEnv(options.env),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk) => {
      stdout += chunk;
    });
    child.stderr.setEncoding("utf8").on("data", (chunk) => {
      stderr += chunk;
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** Parses the one JSON object a `--json` run prints. */
export function jsonOf<T = Record<string, unknown>>(run: WeirRun): T {
  try {
    return JSON.parse(run.stdout) as T;
  } catch {
    throw new Error(`not JSON (exit ${run.code}):\n${run.stdout}\n${run.stderr}`);
  }
}

/** A long-running `weir` (such as serve), with its output collected as it comes. */
export interface WeirProcess {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves with the first line of `stream` (stdout unless told) that matches. */
  waitForLine(pattern: RegExp, timeoutMs?: number, stream?: "stdout" | "stderr"): Promise<string>;
  exited: Promise<number | null>;
}

export function startWeir(args: readonly string[], options: WeirRunOptions = {}): WeirProcess {
  const child = spawn(process.execPath, [WEIR_BIN, ...args], {
    cwd: options.cwd,
    env: childEnv(options.env),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  const waiters: { pattern: RegExp; stream: "stdout" | "stderr"; resolve: (line: string) => void }[] = [];
  const check = () => {
    for (const waiter of [...waiters]) {
      const text = waiter.stream === "stdout" ? out : err;
      const line = text.split("\n").find((l) => waiter.pattern.test(l));
      if (line !== undefined) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(line);
      }
    }
  };
  child.stdout!.setEncoding("utf8").on("data", (chunk) => {
    out += chunk;
    check();
  });
  child.stderr!.setEncoding("utf8").on("data", (chunk) => {
    err += chunk;
    check();
  });
  const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    waitForLine(pattern, timeoutMs = 20_000, stream = "stdout") {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () =>
            reject(
              new Error(
                `no line matching ${pattern} within ${timeoutMs} ms\nstdout:\n${out}\nstderr:\n${err}`,
              ),
            ),
          timeoutMs,
        );
        exited.then((code) => {
          clearTimeout(timer);
          reject(
            new Error(
              `weir exited with ${code} before printing ${pattern}\nstdout:\n${out}\nstderr:\n${err}`,
            ),
          );
        });
        waiters.push({
          pattern,
          stream,
          resolve: (line) => {
            clearTimeout(timer);
            resolve(line);
          },
        });
        check();
      });
    },
  };
}
