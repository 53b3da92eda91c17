// Child processes of the benchmark and small helpers its clients share.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

/**
 * Starts `lib/<script>` in a child process and waits for the line `<name> listening on <url>`.
 * WEIR_BENCH_PROFILE=<dir> runs it under `--cpu-prof`, the profile written to that directory.
 */
export async function startChild(script, env) {
  const file = fileURLToPath(new URL(`./${script}`, import.meta.url));
  const profile = process.env.WEIR_BENCH_PROFILE;
  const args = profile ? ["--cpu-prof", `--cpu-prof-dir=${profile}`, file] : [file];
  const child = spawn(process.execPath, args, {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
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
    async stop() {
      child.kill("SIGTERM");
      await exited;
    },
  };
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
