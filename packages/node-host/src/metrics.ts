import type { IngestEvent, RequestRecord } from "@weir/host-core";
import { Counter, collectDefaultMetrics, Gauge, type Metric, Registry } from "prom-client";

/** A line of a scraped metric, as prom-client's registry renders it. */
interface SeriesValue {
  value: number;
  labels: Record<string, string | number>;
  metricName?: string;
}

const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

/** One kind of request: counts by result class; latencies per bucket (not cumulative), sum, count. */
interface KindSeries {
  results: Map<string, number>;
  buckets: number[];
  sum: number;
  count: number;
}

/** Prometheus metrics of one server, in a registry of its own (two servers in a process never clash). */
export class Metrics {
  readonly registry = new Registry();
  /** Requests and latencies by kind: plain numbers, rendered when scraped. */
  private readonly kinds = new Map<string, KindSeries>();
  private readonly ingestRows: Counter;
  private readonly ingestBatches: Counter;
  private readonly ingestPasses: Counter<"outcome">;
  /** Each namespace's lag behind its upstream as its last pass saw it (seconds). */
  private readonly lags = new Map<string, number>();

  constructor(sources: {
    openNamespaces(): number;
    unavailableNamespaces(): number;
    wakeSockets(): number;
    zeroSockets(): number;
    /** Sockets refused for a cap so far, by cap (`user`, `server`). */
    socketRefusals(): Readonly<Record<string, number>>;
    socketUnsentBytes(): number;
    overflowNamespaces(): number;
  }) {
    collectDefaultMetrics({ register: this.registry });
    // prom-client's own Counter and Histogram hash the labels on every call, a cost paid per
    // request; these count in plain numbers and hand the registry their values when scraped.
    this.registry.registerMetric(
      scraped("weir_requests_total", "Requests by kind and result class", "counter", () =>
        [...this.kinds].flatMap(([kind, series]) =>
          [...series.results].map(([result, value]) => ({ labels: { kind, result }, value })),
        ),
      ),
    );
    this.registry.registerMetric(
      scraped("weir_request_duration_seconds", "Request latency by kind", "histogram", () =>
        [...this.kinds].flatMap(([kind, series]) => histogramValues(kind, series)),
      ),
    );
    this.sourceGauge("weir_open_namespaces", "Namespaces whose database is open", () =>
      sources.openNamespaces(),
    );
    this.sourceGauge(
      "weir_unavailable_namespaces",
      "Namespaces refused because their database is damaged or lost (each logged once)",
      () => sources.unavailableNamespaces(),
    );
    this.ingestRows = new Counter({
      name: "weir_ingest_rows_total",
      help: "Rows ingested from upstreams",
      registers: [this.registry],
    });
    this.ingestBatches = new Counter({
      name: "weir_ingest_batches_total",
      help: "Upstream batches applied",
      registers: [this.registry],
    });
    this.ingestPasses = new Counter({
      name: "weir_ingest_passes_total",
      help: "Ingest passes by outcome (failed: the upstream refused or a batch drifted; paused: the breaker was open)",
      labelNames: ["outcome"],
      registers: [this.registry],
    });
    const lags = this.lags;
    new Gauge({
      name: "weir_ingest_lag_seconds",
      help: "The largest time since a namespace last caught up with its upstream, as its last pass saw it",
      registers: [this.registry],
      collect() {
        let largest = 0;
        for (const lag of lags.values()) largest = Math.max(largest, lag);
        this.set(largest);
      },
    });
    this.sourceGauge(
      "weir_overflow_namespaces",
      "Namespaces in the overflow worker: their steps passed stepBudgetMs, or kept their worker busy",
      () => sources.overflowNamespaces(),
    );
    this.sourceGauge("weir_wake_sockets", "Open wake sockets", () => sources.wakeSockets());
    this.sourceGauge("weir_zero_sockets", "Open Zero sockets", () => sources.zeroSockets());
    this.registry.registerMetric(
      scraped(
        "weir_socket_refusals_total",
        "Wake and Zero sockets refused for a cap: a user's (maxSocketsPerUser) or the server's (maxSockets)",
        "counter",
        () => Object.entries(sources.socketRefusals()).map(([cap, value]) => ({ labels: { cap }, value })),
      ),
    );
    this.sourceGauge(
      "weir_socket_unsent_bytes",
      "Bytes queued for wake and Zero sockets that their clients have not read yet (each socket is closed past maxSocketBufferBytes)",
      () => sources.socketUnsentBytes(),
    );
  }

  /** A gauge whose value is read from its source when scraped. */
  private sourceGauge(name: string, help: string, read: () => number): void {
    new Gauge({
      name,
      help,
      registers: [this.registry],
      collect() {
        this.set(read());
      },
    });
  }

  observe(record: RequestRecord): void {
    let series = this.kinds.get(record.kind);
    if (!series) {
      series = { results: new Map(), buckets: LATENCY_BUCKETS.map(() => 0), sum: 0, count: 0 };
      this.kinds.set(record.kind, series);
    }
    series.results.set(record.result, (series.results.get(record.result) ?? 0) + 1);
    const seconds = record.totalMs / 1000;
    const bucket = LATENCY_BUCKETS.findIndex((bound) => seconds <= bound);
    if (bucket >= 0) series.buckets[bucket]!++;
    series.sum += seconds;
    series.count++;
  }

  observeIngest(event: IngestEvent): void {
    this.ingestRows.inc(event.rows);
    this.ingestBatches.inc(event.batches);
    this.ingestPasses.inc({ outcome: event.outcome });
    if (event.lagMs !== null) this.lags.set(event.ns, event.lagMs / 1000);
  }

  async render(): Promise<{ body: string; contentType: string }> {
    return { body: await this.registry.metrics(), contentType: this.registry.contentType };
  }
}

/** A metric the registry renders from `values()` when scraped. */
function scraped(
  name: string,
  help: string,
  type: "counter" | "histogram",
  values: () => SeriesValue[],
): Metric {
  const get = async () => ({ name, help, type, aggregator: "sum" as const, values: values() });
  return { name, help, type, aggregator: "sum", get } as unknown as Metric;
}

/** A kind's histogram series: cumulative buckets up to +Inf, then the sum and the count. */
function histogramValues(kind: string, { buckets, sum, count }: KindSeries): SeriesValue[] {
  const name = "weir_request_duration_seconds";
  let cumulative = 0;
  const values: SeriesValue[] = LATENCY_BUCKETS.map((bound, i) => {
    cumulative += buckets[i]!;
    return { metricName: `${name}_bucket`, labels: { le: bound, kind }, value: cumulative };
  });
  values.push({ metricName: `${name}_bucket`, labels: { le: "+Inf", kind }, value: count });
  values.push({ metricName: `${name}_sum`, labels: { kind }, value: sum });
  values.push({ metricName: `${name}_count`, labels: { kind }, value: count });
  return values;
}
