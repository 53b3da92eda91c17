import type { MessagePort } from "node:worker_threads";
import type { UpstreamSource } from "@weir/protocol";
import type { Registry } from "prom-client";
import type { WeirColumnType } from "./column-codec.js";
import type { UpstreamStatus } from "./upstream-status.js";

/**
 * The tables as weir's schema declares them: columns with weir types (nullable where PostgreSQL
 * has no NOT NULL constraint), and the primary key.
 */
export interface UpstreamSchema {
  tables: Record<
    string,
    {
      columns: Record<string, WeirColumnType | { type: WeirColumnType; nullable: true }>;
      primaryKey: string[];
    }
  >;
}

export interface PostgresUpstream {
  /** The upstream as `namespace` sees it (its tenant's rows only, when tables have a tenant column). */
  source(namespace: string): UpstreamSource;
  status(): Promise<UpstreamStatus>;
  /** The followed tables in weir's types, for the namespace's schema (as of the last column added). */
  readonly schema: UpstreamSchema;
  /** Prometheus series (`weir_upstream_*`), in a registry of their own. */
  readonly metrics: Registry;
  /**
   * A message port through which another thread reaches this upstream's contract
   * (`upstreamOverPort(port).source(namespace)`): hand it to a Node host's worker threads with
   * `workerConfig.ports`. Its calls are refused with 503 once the upstream is closed.
   */
  connect(): MessagePort;
  /** Stops reading, waits for notify calls in flight and closes the buffer. The slot stays. */
  close(): Promise<void>;
  /** Closes, then drops the slot and the publication. */
  dropReplication(): Promise<{ slot: boolean; publication: boolean }>;
}
