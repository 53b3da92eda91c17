import {
  createWeirHost,
  type HostPorts,
  type Logger,
  TimerScheduler,
  type Wake,
  type WeirConfig,
  type WeirHost,
} from "@weir/host-core";
import { loadNodeEngine } from "./load-node-engine.js";
import type { NodeHostOptions } from "./node-options.js";
import { type FileStorage, fileStorage, memoryStorage } from "./storage.js";

const DEFAULT_DATA_DIR = ".data";
const DEFAULT_IDLE_CLOSE_MS = 60_000;

/** A host over Node's storage, scheduler and the given wake port, with what closes it. */
export interface NodeHost {
  host: WeirHost;
  /** Closes the host's namespaces, then the storage and the timers. */
  close(): Promise<void>;
}

/**
 * Builds the runtime-agnostic host on this thread: the engine, file (or memory) storage, timers,
 * and the sweep that closes idle namespaces. The routing thread runs one when there are no
 * workers; each worker thread runs one for its share of the namespaces.
 */
export async function startNodeHost(
  options: NodeHostOptions,
  config: WeirConfig,
  logger: Logger,
  ports: { wake: Wake; onStep?(namespace: string, ms: number, failure: unknown): void } & Pick<
    HostPorts,
    "observe" | "observeIngest"
  >,
): Promise<NodeHost> {
  const scheduler = new TimerScheduler();
  let files: FileStorage | undefined;
  if (options.storage !== "memory") {
    const maxBytes = options.maxDatabaseBytes;
    files = fileStorage(options.dataDir ?? DEFAULT_DATA_DIR, {
      logger,
      ...(maxBytes === undefined ? {} : { maxDatabaseBytes: maxBytes }),
      ...(ports.onStep ? { onStep: ports.onStep } : {}),
    });
  }
  const [engine, storage] = await Promise.all([loadNodeEngine(), files ?? memoryStorage()]);
  const host = createWeirHost(config, engine, {
    storage,
    ...(files ? { quotaStore: files.quotaStore } : {}),
    scheduler,
    wake: ports.wake,
    logger,
    memory: () => {
      const { rss, heapUsed, external } = process.memoryUsage();
      // maxRSS is in kilobytes: the process's peak, which a sample of rss would miss.
      const maxRssBytes = process.resourceUsage().maxRSS * 1024;
      return { rssBytes: rss, maxRssBytes, heapUsedBytes: heapUsed, externalBytes: external };
    },
    ...(ports.observe ? { observe: ports.observe } : {}),
    ...(ports.observeIngest ? { observeIngest: ports.observeIngest } : {}),
  });
  const idleMs = options.idleCloseMs ?? DEFAULT_IDLE_CLOSE_MS;
  // A sweep looks at each open namespace, which costs next to nothing: sweeping often keeps the
  // close within a twentieth of idleMs (at most a second) of its time.
  const idleTimer = setInterval(() => host.closeIdle(idleMs), Math.min(1_000, Math.max(50, idleMs / 20)));
  idleTimer.unref();
  return {
    host,
    async close() {
      await host.close();
      await files?.close();
      clearInterval(idleTimer);
      scheduler.close();
    },
  };
}
