import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startWeir, type WeirProcess } from "./weir-process.js";

export const ADMIN_KEY = "test-admin-key-0123";

/** A config with the table and mutators `weir bench` sends, dev auth and an admin key. */
const benchConfig = (extra: string) => `export default {
  schema: { tables: { item: { columns: { id: "string", value: "number" }, primaryKey: ["id"] } } },
  mutators: {
    benchPut(tx, args) { tx.upsert("item", { id: args.id, value: args.value }); },
    benchSeed(tx, { prefix, start, count }) {
      for (let i = 0; i < count; i++) tx.insert("item", { id: prefix + "-" + (start + i), value: start + i });
    },
  },
  devAuth: true,
  adminKey: "${ADMIN_KEY}",${extra}
};
`;

export const BENCH_CONFIG = benchConfig("");

/**
 * The same without the per-user request quota (100,000 a minute by default), for tests that
 * drive the server as fast as it goes: a fast server spends it within one test file's minute.
 */
export const UNTHROTTLED_BENCH_CONFIG = benchConfig("\n  quotas: { requestUnits: null },");

export interface TestServer {
  dir: string;
  /** The server's origin, as in http://127.0.0.1:34567 */
  origin: string;
  process: WeirProcess;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>;
  /** Stops the server if it runs and removes its directory. */
  dispose(): Promise<void>;
}

/** Runs `weir serve --port 0 --json` on a config file in a new temporary directory. */
export async function startTestServer(
  config = BENCH_CONFIG,
  options: { configName?: string; args?: string[] } = {},
): Promise<TestServer> {
  const dir = mkdtempSync(join(tmpdir(), "weir-serve-"));
  const configFile = join(dir, options.configName ?? "weir.config.mjs");
  writeFileSync(configFile, config);
  const child = startWeir(
    ["serve", "--config", configFile, "--port", "0", "--json", ...(options.args ?? [])],
    {
      cwd: dir,
    },
  );
  const line = await child.waitForLine(/^\{"url":/);
  const origin = (JSON.parse(line) as { url: string }).url;
  const stop = async () => {
    if (child.child.exitCode === null) child.child.kill("SIGTERM");
    return child.exited;
  };
  return {
    dir,
    origin,
    process: child,
    stop,
    async dispose() {
      if (child.child.exitCode === null) {
        child.child.kill("SIGKILL");
        await child.exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** POSTs JSON and answers the status and parsed body. */
export async function postJson(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: unknown }> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null };
}

/** One native-dialect push of one mutation. */
export function pushOne(
  nsUrl: string,
  user: string,
  mutation: { clientID: string; id: number; name: string; args: unknown },
  clientGroupID = `group-${user}`,
) {
  return postJson(
    `${nsUrl}/push`,
    { clientGroupID, pushVersion: 1, mutations: [{ type: "custom", ...mutation, args: [mutation.args] }] },
    { authorization: user },
  );
}
