// For host-core's own tests: real SQLite (better-sqlite3, in memory), the real engine, and ports
// that do no more than a test needs. Not part of the package's build.
import { readFile } from "node:fs/promises";
import { type Engine, engineWasmUrl, loadEngine, type SqlAdapter } from "@weir/engine-wasm";
import { betterSqliteAdapter } from "@weir/engine-wasm/better-sqlite3";
import Database from "better-sqlite3";
import { resolveConfig } from "../src/config/resolve-config.js";
import type { WeirConfig } from "../src/config/weir-config.js";
import type { HostPorts } from "../src/host/host-ports.js";
import { createWeirHost, type WeirHost } from "../src/host/weir-host.js";
import { tableInfos } from "../src/mutators/column-codec.js";
import { type CounterFlushPolicy, DEFAULT_COUNTER_FLUSH } from "../src/namespace/counter-flush.js";
import { NamespaceService } from "../src/namespace/namespace-service.js";
import { systemClock } from "../src/ports/clock.js";
import type { NamespaceStore, Storage } from "../src/ports/storage.js";
import { TimerScheduler } from "../src/ports/timer-scheduler.js";
import type { Wake } from "../src/ports/wake.js";

let engine: Promise<Engine> | undefined;

/** One engine for a test file's hosts, as a server has. */
export function testEngine(): Promise<Engine> {
  engine ??= readFile(engineWasmUrl).then((bytes) => loadEngine(bytes));
  return engine;
}

/** A namespace database in memory; `wrap` may stand between the engine and SQLite. */
export function memoryStore(wrap: (db: SqlAdapter) => SqlAdapter = (db) => db): NamespaceStore {
  const raw = new Database(":memory:");
  const run = raw.transaction((fn: () => unknown) => fn());
  return {
    db: wrap(betterSqliteAdapter(raw)),
    transaction: <T>(fn: () => T) => run(fn) as T,
    sizeBytes: () => 0,
    close: () => raw.close(),
  };
}

/** Storage of in-memory databases, one per namespace, made by `open`. */
export function memoryStorage(open: (namespace: string) => NamespaceStore = () => memoryStore()): Storage {
  return { closesWhenIdle: false, open };
}

/** A host of `config` over these ports (in-memory storage, no wake sockets, no logs by default). */
export async function testHost(config: WeirConfig, ports: Partial<HostPorts> = {}): Promise<WeirHost> {
  return createWeirHost(config, await testEngine(), {
    storage: memoryStorage(),
    scheduler: new TimerScheduler(),
    wake: { send: () => 0, count: () => 0, probes: () => new Map() },
    logger: { log() {} },
    ...ports,
  });
}

/** Sends a request to a host; the answer's status and JSON body. */
export async function send(
  host: WeirHost,
  method: string,
  path: string,
  options: { user?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<{
  status: number; // biome-ignore lint/suspicious/noExplicitAny: tests read answers field by field
  json: any;
  headers: Headers;
}> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.user !== undefined) headers.authorization = options.user;
  if (options.body !== undefined) headers["content-type"] = "application/json";
  const response = await host.handle(
    new Request(`http://weir.test${path}`, {
      method,
      headers,
      ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
    }),
  );
  const text = await response.text();
  return { status: response.status, json: text ? JSON.parse(text) : null, headers: response.headers };
}

/** Claims from the Authorization header: the header is the user id. */
export const headerUser: WeirConfig["authenticate"] = (request) => {
  const user = request.headers.get("authorization");
  return user ? { userID: user } : null;
};

/** A namespace's service over an in-memory database, with `wake` recording what it sent. */
export async function testService(
  config: WeirConfig,
  options: { store?: NamespaceStore; counterFlush?: CounterFlushPolicy; wake?: Wake } = {},
): Promise<{ service: NamespaceService; woken: Array<string | null>; scheduler: TimerScheduler }> {
  const woken: Array<string | null> = [];
  const scheduler = new TimerScheduler();
  const resolved = resolveConfig(config);
  const service = new NamespaceService({
    namespace: "ns",
    hash: "0000000000000000",
    store: options.store ?? memoryStore(),
    engine: await testEngine(),
    config: resolved,
    tables: tableInfos(resolved.schema),
    scheduler,
    wake: options.wake ?? {
      send: (_namespace, _audience, except) => {
        woken.push(except);
        return 1;
      },
      count: () => 0,
      probes: () => new Map(),
    },
    clock: systemClock,
    logger: { log() {} },
    counterFlush: options.counterFlush ?? DEFAULT_COUNTER_FLUSH,
    waitUntil: () => {},
    upstream: resolved.upstream?.source("ns") ?? null,
    pollScheduler: new TimerScheduler(),
  });
  return { service, woken, scheduler };
}
