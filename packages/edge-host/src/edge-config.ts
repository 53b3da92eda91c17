import type { SqlAdapter } from "@weir/engine-wasm";
import type { Logger, WeirConfig } from "@weir/host-core";

/** What the object's alarm task sees each time it runs. */
export interface AlarmContext<Env> {
  namespace: string;
  env: Env;
  /**
   * Writes to the namespace's tables in a transaction and commits them as a version that pulls
   * and wake sockets see (host-core's `NamespaceService.write`).
   */
  write<T>(fn: (db: SqlAdapter) => T): T;
}

/**
 * Work on the object's alarm, which survives eviction and restarts (the slot that upstream
 * polling uses). It first runs `firstDelayMs` after the object learns its namespace; `run`
 * answers the delay until its next run, or null to stop. A run that throws is retried by the
 * platform with backoff.
 */
export interface AlarmTask<Env> {
  firstDelayMs: number;
  run(context: AlarmContext<Env>): number | null | Promise<number | null>;
}

export interface EdgeConfig<Env = unknown> extends WeirConfig {
  /** The Durable Object namespace binding of the sync object (default `WEIR`). */
  binding?: string;
  /** A path prefix the Worker serves weir under, e.g. `/sync` (default none). */
  basePath?: string;
  logger?: Logger;
  alarm?: AlarmTask<Env>;
  /**
   * Which keepalive the platform answers itself, without waking a hibernating object (it answers
   * one only): wake sockets' `ping` (`"wake"`, the default) or the Zero client's `["ping",{}]`,
   * sent every five idle seconds (`"zero"`). The other is answered by the object, which wakes.
   */
  autoResponse?: "wake" | "zero";
  /**
   * Wake and Zero sockets one user may hold open in a namespace at once (default 100; `null`: no
   * cap). One more is refused: a wake upgrade with 429 `too_many_sockets`, a Zero connection with
   * its `ServerOverloaded` error.
   */
  maxSocketsPerUser?: number | null;
  /**
   * Messages a second all of one user's sockets in a namespace together are taken in at (default
   * 200, in bursts of five seconds of it), besides each socket's own pace; a socket that sends its
   * burst and as many again past the pace (its own, or its user's) is closed with 1008.
   */
  userMessagesPerSecond?: number;
}

/** A config, or a function of the Worker's `env` (for secrets such as the admin key or JWT keys). */
export type EdgeConfigSource<Env> = EdgeConfig<Env> | ((env: Env) => EdgeConfig<Env>);

const resolved = new WeakMap<object, EdgeConfig<never>>();

/** The config for this `env`, built once per isolate. */
export function configFor<Env>(source: EdgeConfigSource<Env>, env: Env): EdgeConfig<Env> {
  if (typeof source !== "function") return source;
  const key = (env ?? {}) as object;
  let config = resolved.get(key) as EdgeConfig<Env> | undefined;
  if (!config) {
    config = source(env);
    resolved.set(key, config as EdgeConfig<never>);
  }
  return config;
}
