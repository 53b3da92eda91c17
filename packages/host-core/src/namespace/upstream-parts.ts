import type { Engine } from "@weir/engine-wasm";
import type { UpstreamSource } from "@weir/protocol";
import type { ResolvedConfig } from "../config/weir-config.js";
import { MutateDelegate } from "../delegate/mutate-delegate.js";
import { type IngestEvent, NamespaceIngest } from "../ingest/namespace-ingest.js";
import type { Clock } from "../ports/clock.js";
import type { Logger } from "../ports/logger.js";
import type { Scheduler } from "../ports/scheduler.js";
import type { NamespaceStore } from "../ports/storage.js";
import type { ControlStore } from "./control-store.js";

export interface UpstreamPartsInit {
  namespace: string;
  hash: string;
  config: ResolvedConfig;
  engine: Engine;
  store: NamespaceStore;
  control: ControlStore;
  clock: Clock;
  logger: Logger;
  /** The namespace's upstream (config.upstream's source for it), null without one. */
  source: UpstreamSource | null;
  pollScheduler: Scheduler;
  observeIngest?(event: IngestEvent): void;
  waitUntil(promise: Promise<unknown>): void;
  wakeSockets(): number;
  committed(): void;
  enter(): void;
  leave(): void;
  /** The upstream cursor the namespace reached, null before any batch. */
  upstreamCursor(): string | null;
}

/**
 * A namespace's side of its upstream: the ingester when it replicates one, and the delegate when
 * its pushes go to the app's mutate endpoint (which needs the ingester to see their effects).
 */
export function upstreamParts(init: UpstreamPartsInit): {
  ingester: NamespaceIngest | null;
  delegate: MutateDelegate | null;
} {
  const { config, source } = init;
  if (!config.upstream || !source) return { ingester: null, delegate: null };
  const ingester = new NamespaceIngest({
    namespace: init.namespace,
    hash: init.hash,
    engine: init.engine,
    store: init.store,
    schema: config.schema,
    source,
    upstream: config.upstream,
    control: init.control,
    clock: init.clock,
    logger: init.logger,
    scheduler: init.pollScheduler,
    wakeSockets: init.wakeSockets,
    committed: init.committed,
    enter: init.enter,
    leave: init.leave,
    waitUntil: init.waitUntil,
    ...(init.observeIngest ? { observe: init.observeIngest } : {}),
  });
  const url = config.mutate?.url(init.namespace) ?? null;
  const delegate =
    url === null
      ? null
      : new MutateDelegate({
          namespace: init.namespace,
          url,
          mutate: config.mutate!,
          clock: init.clock,
          catchUp: (watermark, waitMs) => ingester.catchUp(watermark, waitMs),
          building: () => init.upstreamCursor() === null,
        });
  return { ingester, delegate };
}
