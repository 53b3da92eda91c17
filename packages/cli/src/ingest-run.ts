import { performance } from "node:perf_hooks";
import { EngineError } from "@weir/engine-wasm";
import {
  type BreakerLimits,
  BreakerOpenError,
  ControlStore,
  DEFAULT_BREAKER_LIMITS,
  httpUpstream,
  type IngestPassResult,
  type IngestProgress,
  IngestStoppedError,
  runRecordedIngestPass,
  storedBreaker,
  UPSTREAM_DEFAULTS,
} from "@weir/host-core";
import { UpstreamCallError } from "@weir/protocol";
import { ProgressLine } from "./bench/progress-line.js";
import { CliError, EXIT_FAILURE, EXIT_OK } from "./cli-error.js";
import { configSchema, openIngestTarget } from "./ingest-target.js";
import type { Output } from "./output.js";

/** The flags of `weir ingest`. */
export interface IngestOptions {
  upstream: URL;
  token?: string;
  config?: string;
  maxRows: number;
  maxBytes: number;
  maxTime: number;
  retries: number;
  changesLimit?: number;
  pageRows?: number;
  resnapshot?: boolean;
  wait: number;
  scheduled?: boolean;
  json?: boolean;
}

interface LoadedConfig {
  config: Record<string, unknown>;
  path: string;
}

/** The config's `upstream` knobs the command uses (its source is the --upstream URL). */
function upstreamKnobs(loaded: LoadedConfig | undefined): {
  changesLimit?: number;
  pageRows?: number;
  breaker: BreakerLimits;
} {
  const upstream = loaded?.config.upstream;
  if (upstream === undefined || upstream === null) return { breaker: DEFAULT_BREAKER_LIMITS };
  if (typeof upstream !== "object")
    throw new CliError(`config ${loaded!.path}: upstream must be an object`, "bad_config");
  const knobs = upstream as Record<string, unknown>;
  const count = (value: unknown, name: string, min: number): number | undefined => {
    if (value === undefined) return undefined;
    if (typeof value !== "number" || !Number.isSafeInteger(value) || value < min)
      throw new CliError(
        `config ${loaded!.path}: upstream.${name} must be an integer >= ${min}`,
        "bad_config",
      );
    return value;
  };
  const breaker = (knobs.breaker ?? {}) as Record<string, unknown>;
  const changesLimit = count(knobs.changesLimit, "changesLimit", 1);
  const pageRows = count(knobs.pageRows, "pageRows", 100);
  return {
    ...(changesLimit === undefined ? {} : { changesLimit }),
    ...(pageRows === undefined ? {} : { pageRows }),
    breaker: {
      rows: count(breaker.rows, "breaker.rows", 1) ?? DEFAULT_BREAKER_LIMITS.rows,
      windowMs: count(breaker.windowMs, "breaker.windowMs", 1) ?? DEFAULT_BREAKER_LIMITS.windowMs,
    },
  };
}

/** Stops the pass at its next step on Ctrl-C or SIGTERM: what committed stays, the lease is let go. */
function stopOnSignals(): { stopped(): boolean; sleep(ms: number): Promise<void>; dispose(): void } {
  let stopped = false;
  const wakers = new Set<() => void>();
  const stop = () => {
    stopped = true;
    for (const wake of wakers) wake();
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  return {
    stopped: () => stopped,
    sleep: (ms) =>
      new Promise((resolve) => {
        const done = () => {
          clearTimeout(timer);
          wakers.delete(done);
          resolve();
        };
        const timer = setTimeout(done, ms);
        wakers.add(done);
      }),
    dispose: () => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
    },
  };
}

function describe(progress: IngestProgress | null): string {
  if (!progress) return "ingest  starting";
  const where = progress.table ? ` ${progress.table}` : "";
  return `ingest  ${progress.phase}${where}  ${progress.rows.toLocaleString("en-US")} rows  ${(progress.bytes / 1e6).toFixed(1)} MB  cursor ${progress.cursor ?? "none"}`;
}

/** One bounded pass on a namespace's file, under its lease; prints the JSON summary. */
export async function runIngestOnFile(
  out: Output,
  options: IngestOptions,
  file: string,
  loaded: LoadedConfig | undefined,
): Promise<number> {
  const schema = loaded === undefined ? undefined : configSchema(loaded.config, loaded.path);
  const knobs = upstreamKnobs(loaded);
  const target = await openIngestTarget(file, schema);
  const signals = stopOnSignals();
  let latest: IngestProgress | null = null;
  const progress = new ProgressLine(out.errorStream, () => describe(latest));
  try {
    const { engine, store } = target;
    const control = ControlStore.open(store);
    // The holder of the file's lease claims a newer fencing token, as a server does when it
    // opens the namespace: a stale holder's late writes are then refused by the engine.
    const fence = store.transaction(() => engine.claimFence(store.db));
    const token = options.token ?? process.env.WEIR_UPSTREAM_TOKEN;
    const source = httpUpstream({ url: options.upstream.href, ...(token ? { token } : {}) });
    const started = performance.now();
    const base = {
      file,
      upstream: options.upstream.href,
      schema: target.schemaSource,
      install: target.install,
      budget: {
        maxRows: options.maxRows,
        maxBytes: options.maxBytes,
        maxTimeMs: Math.round(options.maxTime * 1000),
        retries: options.retries,
      },
    };
    if (!out.json) progress.start();
    let result: IngestPassResult;
    try {
      result = await runRecordedIngestPass(control, {
        engine,
        store,
        schema: target.schema,
        source,
        fence,
        breaker: storedBreaker(control, knobs.breaker, Date.now()),
        now: Date.now,
        monotonic: () => performance.now(),
        sleep: signals.sleep,
        random: Math.random,
        budget: {
          maxRows: options.maxRows,
          maxBytes: options.maxBytes,
          deadline: started + options.maxTime * 1000,
          maxAttempts: options.retries + 1,
        },
        resnapshot: options.resnapshot === true,
        changesLimit: options.changesLimit ?? knobs.changesLimit ?? UPSTREAM_DEFAULTS.changesLimit,
        pageRows: options.pageRows ?? knobs.pageRows ?? UPSTREAM_DEFAULTS.pageRows,
        onProgress: (step) => {
          latest = step;
        },
        stopped: signals.stopped,
      });
    } catch (error) {
      progress.stop();
      if (error instanceof BreakerOpenError) {
        // The stored breaker is open: the pass did not start; it may run from retryAt on.
        const cursor = engine.upstreamState(store.db).cursor;
        out.summary({
          ...base,
          outcome: "pending_retry",
          rows: 0,
          bytes: 0,
          batches: 0,
          cursor: { before: cursor, after: cursor },
          attempts: 0,
          elapsedMs: Math.round(performance.now() - started),
          retryAt: new Date(error.retryAt).toISOString(),
          error: error.message,
        });
        out.note(`weir: ${error.message}`);
        return EXIT_FAILURE;
      }
      throw passFailure(error);
    }
    progress.stop();
    const summary = {
      ...base,
      outcome: result.outcome,
      rows: result.rows,
      bytes: result.bytes,
      batches: result.batches,
      cursor: { before: result.cursorBefore, after: result.cursorAfter },
      attempts: result.attempts,
      elapsedMs: Math.round(performance.now() - started),
      watermark: engine.state(store.db).watermark,
      snapshot: result.snapshot,
      ...(result.retryAt === undefined ? {} : { retryAt: new Date(result.retryAt).toISOString() }),
      ...(result.error === undefined ? {} : { error: result.error }),
    };
    out.summary(summary);
    out.note(noteFor(summary.outcome, summary.rows, summary.error));
    return result.outcome === "pending_retry" ? EXIT_FAILURE : EXIT_OK;
  } finally {
    progress.stop();
    signals.dispose();
    target.close();
  }
}

function noteFor(outcome: IngestPassResult["outcome"], rows: number, error?: string): string {
  const ingested = `${rows.toLocaleString("en-US")} rows`;
  switch (outcome) {
    case "complete":
      return `weir: caught up with the upstream (${ingested})`;
    case "pending_budget":
      return `weir: stopped at the row or byte budget (${ingested}); run weir ingest again to go on`;
    case "wall_budget_exceeded":
      return `weir: stopped at --max-time (${ingested}); run weir ingest again to go on`;
    case "pending_retry":
      return `weir: the upstream failed (${error ?? "unknown"}); run weir ingest again later`;
  }
}

/** A failure that ends the pass without an outcome, as one clear message. */
function passFailure(error: unknown): unknown {
  if (error instanceof IngestStoppedError) {
    return new CliError(
      `ingest is stopped (${error.message}); fix the schema or the upstream, then reopen it with weir admin <namespace-url> breaker/reopen`,
      "ingest_stopped",
    );
  }
  if (error instanceof EngineError && error.code === "schema_drift") {
    return new CliError(`ingest stopped: ${error.message}`, "schema_drift");
  }
  if (error instanceof EngineError && error.code === "conflict") {
    return new CliError(`another holder claimed this namespace meanwhile: ${error.message}`, "fenced");
  }
  if (error instanceof UpstreamCallError) {
    return new CliError(
      `the upstream refused: ${error.message} (${error.code})`,
      "upstream_refused",
      EXIT_FAILURE,
      {
        status: error.status,
      },
    );
  }
  return error;
}
