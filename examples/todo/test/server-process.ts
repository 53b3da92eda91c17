import { type ChildProcess, spawn } from "node:child_process";

// An example's server entry (`node dist/server.js`, what its `npm start` runs) in a process of
// its own, for the browser tests.

export interface AppServer {
  process: ChildProcess;
  /** Its origin, without a trailing slash. */
  url: string;
  output(): string;
}

/** Starts `node <entry>` and waits for the line that says where weir listens. */
export function startAppServer(entry: string, env: Record<string, string>): Promise<AppServer> {
  const child = spawn(process.execPath, [entry], {
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
