import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

/** The example's server entry, as `npm start` runs it (built by `pnpm build`). */
export const SERVER_ENTRY = fileURLToPath(new URL("../dist/server.js", import.meta.url));

export interface AppServer {
  process: ChildProcess;
  /** Its origin, without a trailing slash. */
  url: string;
  output(): string;
}

/** Starts `node dist/server.js` and waits for the line that says where it listens. */
export function startAppServer(env: Record<string, string>): Promise<AppServer> {
  const child = spawn(process.execPath, [SERVER_ENTRY], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /weir listening on (http:\/\/\S+)/.exec(output);
      if (match) resolve({ process: child, url: match[1]!.replace(/\/$/, ""), output: () => output });
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.on("exit", (code) =>
      reject(new Error(`the server exited with ${code} before listening:\n${output}`)),
    );
  });
}

/** Stops the server with SIGTERM (a graceful stop) and waits for it to exit. */
export function stopAppServer(server: AppServer): Promise<void> {
  return new Promise((resolve) => {
    if (server.process.exitCode !== null) return resolve();
    server.process.once("exit", () => resolve());
    server.process.kill("SIGTERM");
  });
}
