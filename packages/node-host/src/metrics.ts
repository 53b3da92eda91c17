import type { RequestRecord } from "@weir/host-core";
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";

/** Prometheus metrics of one server, in a registry of its own (two servers in a process never clash). */
export class Metrics {
  readonly registry = new Registry();
  private readonly requests: Counter<"kind" | "result">;
  private readonly latency: Histogram<"kind">;

  constructor(sources: { openNamespaces(): number; wakeSockets(): number }) {
    collectDefaultMetrics({ register: this.registry });
    this.requests = new Counter({
      name: "weir_requests_total",
      help: "Requests by kind and result class",
      labelNames: ["kind", "result"],
      registers: [this.registry],
    });
    this.latency = new Histogram({
      name: "weir_request_duration_seconds",
      help: "Request latency by kind",
      labelNames: ["kind"],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [this.registry],
    });
    new Gauge({
      name: "weir_open_namespaces",
      help: "Namespaces whose database is open",
      registers: [this.registry],
      collect() {
        this.set(sources.openNamespaces());
      },
    });
    new Gauge({
      name: "weir_wake_sockets",
      help: "Open wake sockets",
      registers: [this.registry],
      collect() {
        this.set(sources.wakeSockets());
      },
    });
  }

  /** The labelled series, looked up once: prom-client hashes the labels on every call otherwise. */
  private readonly series = new Map<
    string,
    { requests: Counter.Internal; latency: Histogram.Internal<"kind"> }
  >();

  observe(record: RequestRecord): void {
    const key = `${record.kind} ${record.result}`;
    let series = this.series.get(key);
    if (!series) {
      series = {
        requests: this.requests.labels(record.kind, record.result),
        latency: this.latency.labels(record.kind),
      };
      this.series.set(key, series);
    }
    series.requests.inc();
    series.latency.observe(record.totalMs / 1000);
  }

  async render(): Promise<{ body: string; contentType: string }> {
    return { body: await this.registry.metrics(), contentType: this.registry.contentType };
  }
}
