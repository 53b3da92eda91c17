import { Gauge, Registry } from "prom-client";
import type { UpstreamStatus } from "./upstream-status.js";

/**
 * Prometheus series of one upstream, in a registry of its own, read from its status when
 * scraped (the status reads the slot's lag from PostgreSQL then, not on every commit).
 */
export function upstreamMetrics(status: () => Promise<UpstreamStatus>): Registry {
  const registry = new Registry();
  let pending: Promise<UpstreamStatus> | null = null;
  // One scrape renders every gauge from one status read.
  const current = () => {
    pending ??= status().finally(() => {
      setImmediate(() => {
        pending = null;
      });
    });
    return pending;
  };
  const gauge = (name: string, help: string, read: (s: UpstreamStatus) => number | null) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      async collect() {
        const value = read(await current());
        if (value !== null) this.set(value);
      },
    });
  gauge(
    "weir_upstream_slot_lag_bytes",
    "WAL the slot holds beyond what the buffer confirmed",
    (s) => s.slotLagBytes,
  );
  gauge("weir_upstream_buffer_changes", "Changes in the buffer", (s) => s.buffer.changes);
  gauge("weir_upstream_buffer_transactions", "Transactions in the buffer", (s) => s.buffer.transactions);
  gauge("weir_upstream_buffer_bytes", "Size of the buffer file and its WAL", (s) => s.buffer.bytes);
  gauge("weir_upstream_oldest_watermark", "Oldest watermark changes answers from", (s) =>
    Number(s.buffer.oldestWatermark),
  );
  gauge("weir_upstream_newest_watermark", "Newest buffered watermark", (s) =>
    Number(s.buffer.newestWatermark),
  );
  gauge("weir_upstream_streaming", "1 while the reader streams from the slot", (s) =>
    s.state === "streaming" ? 1 : 0,
  );
  gauge("weir_upstream_schema_drift", "1 when the reader stopped on schema drift", (s) => (s.drift ? 1 : 0));
  gauge(
    "weir_upstream_reconnect_attempts",
    "Failed connection attempts since the last success",
    (s) => s.reconnect.attempts,
  );
  gauge(
    "weir_upstream_thread_restarts",
    "Times the reader's thread was started again after failing, since start",
    (s) => s.thread?.restarts ?? null,
  );
  gauge(
    "weir_upstream_connection_failures",
    "Connections lost or refused since start",
    (s) => s.reconnect.failures,
  );
  gauge(
    "weir_upstream_committed_transactions",
    "Transactions committed to the buffer since start",
    (s) => s.committed.transactions,
  );
  gauge(
    "weir_upstream_committed_changes",
    "Changes committed to the buffer since start",
    (s) => s.committed.changes,
  );
  new Gauge({
    name: "weir_upstream_namespace_watermark",
    help: "The watermark each namespace last asked changes from",
    labelNames: ["namespace"],
    registers: [registry],
    async collect() {
      this.reset();
      for (const [namespace, cursor] of Object.entries((await current()).namespaces)) {
        this.set({ namespace }, Number(cursor.watermark));
      }
    },
  });
  new Gauge({
    name: "weir_upstream_notify_calls",
    help: "Notify calls to weir since start, by result",
    labelNames: ["result"],
    registers: [registry],
    async collect() {
      const { notify } = await current();
      if (!notify) return;
      this.set({ result: "ok" }, notify.sent);
      this.set({ result: "failed" }, notify.failed);
    },
  });
  return registry;
}
