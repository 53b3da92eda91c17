import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

export interface ChildServer {
  url: string;
  child: ChildProcess;
  output: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Starts a server fixture (the ledger server unless named) in a child process on `dataDir` and
 * waits for its URL.
 */
export async function startChildServer(
  dataDir: string,
  fixture = "ledger-server.mjs",
  env: Record<string, string> = {},
): Promise<ChildServer> {
  const file = fileURLToPath(new URL(`./fixtures/${fixture}`, import.meta.url));
  const child = spawn(process.execPath, [file], {
    env: { ...process.env, ...env, WEIR_DATA_DIR: dataDir },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on("exit", (code, signal) => resolve({ code, signal }));
  });
  const url = await new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /weir listening on (\S+)/.exec(output);
      if (match) resolve(match[1]!);
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    exited.then(({ code, signal }) =>
      reject(new Error(`server exited (${code ?? signal}) before listening:\n${output}`)),
    );
  });
  return { url, child, output: () => output, exited };
}
