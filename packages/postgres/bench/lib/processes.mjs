// Child processes of the benchmark and small helpers its clients share.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

/**
 * Starts `lib/<script>` in a child process and waits for the line `<name> listening on <url>`.
 * WEIR_BENCH_PROFILE=<dir> runs it under `--cpu-prof`, the profile written to that directory.
 * `cpuMs()` asks the child for the CPU time its process has used (`reportCpu`).
 */
export async function startChild(script, env) {
  const file = fileURLToPath(new URL(`./${script}`, import.meta.url));
  const profile = process.env.WEIR_BENCH_PROFILE;
  const args = profile ? ["--cpu-prof", `--cpu-prof-dir=${profile}`, file] : [file];
  const child = spawn(process.execPath, args, {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe", "ipc"],
  });
  let output = "";
  const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve(code ?? signal)));
  const url = await new Promise((resolve, reject) => {
    child.stdout.on("data", (chunk) => {
      output += chunk;
      const match = /listening on (\S+)/.exec(output);
      if (match) resolve(match[1]);
    });
    child.stderr.on("data", (chunk) => {
      output += chunk;
    });
    exited.then((why) => reject(new Error(`${script} exited (${why}):\n${output}`)));
  });
  return {
    url,
    output: () => output,
    /** The child's CPU time so far (user and system), in milliseconds. */
    cpuMs: () =>
      new Promise((resolve) => {
        child.once("message", ({ cpu }) => resolve((cpu.user + cpu.system) / 1000));
        child.send("cpu");
      }),
    async stop() {
      child.kill("SIGTERM");
      await exited;
    },
  };
}

/** In a child started by `startChild`: answers its parent's "cpu" with `process.cpuUsage()`. */
export function reportCpu() {
  process.on("message", (message) => {
    if (message === "cpu") process.send({ cpu: process.cpuUsage() });
  });
  // The channel alone does not keep the child running.
  process.channel?.unref();
}

export function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))];
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** POSTs JSON; answers the parsed body, throwing on any status but 200. */
export async function post(url, body, headers = {}) {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`${url} answered ${response.status}: ${text.slice(0, 300)}`);
  return JSON.parse(text);
}
