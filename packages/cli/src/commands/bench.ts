import { type Command, Option } from "commander";
import { integerArg, namespaceUrlArg, nonNegativeSecondsArg, secondsArg } from "../arguments.js";
import {
  BenchContext,
  type BenchMode,
  type BenchOptions,
  DEFAULT_BENCH_OPTIONS,
} from "../bench/bench-context.js";
import type { FullPullResult } from "../bench/full-pull.js";
import type { LatencySummary } from "../bench/latency-recorder.js";
import { DEFAULT_ARGS_TEMPLATE, mutationArgsArg } from "../bench/mutation-args.js";
import type { PullLoadResult } from "../bench/pull-load.js";
import type { PushLoadResult } from "../bench/push-load.js";
import type { SeedResult } from "../bench/seed.js";
import type { WakeLatencyResult } from "../bench/wake-latency.js";
import { EXIT_FAILURE, EXIT_OK } from "../cli-error.js";
import { defineAction, type RunState } from "../command-action.js";
import { formatNumber } from "../format.js";

const MODES: readonly BenchMode[] = ["push", "pull", "full-pull", "seed", "wake"];

const BENCH_HELP = `
Modes:
  push       N clients push batches of M one-row mutations (--mutator, --args) in closed loops
  pull       N clients pull with the current cookie (caught up) in closed loops
  full-pull  a new client pulls everything (--repeat times, median rate)
  seed       write --rows rows through --seed-mutator (args {prefix, start, count}, 1,000 rows per mutation)
  wake       open --sockets wake sockets; per round push one mutation and time push ack -> wake on each socket

--args defaults to ${DEFAULT_ARGS_TEMPLATE}. The server must define the mutators the mode sends. Exit code 1 if any request failed.`;

type BenchCommandOptions = Omit<BenchOptions, "mode"> & { mode: BenchMode; json?: boolean };

export function registerBench(program: Command, state: RunState): void {
  const d = DEFAULT_BENCH_OPTIONS;
  const command = program
    .command("bench")
    .description("load generator: push/pull throughput, full-pull rate and wake latency against a namespace")
    .argument("<url>", "namespace URL, as in http://127.0.0.1:4848/todo", namespaceUrlArg)
    .addOption(new Option("--mode <mode>", "what to measure").choices(MODES).default("push"))
    .addOption(
      new Option("--dialect <dialect>", "wire dialect").choices(["replicache", "native"]).default(d.dialect),
    )
    .option("--auth <value>", "Authorization header sent with every request", d.auth)
    .option("-c, --clients <n>", "concurrent clients (push, pull)", integerArg(1, 10_000), d.clients)
    .option("-m, --mutations <n>", "mutations per push", integerArg(1, 10_000), d.mutationsPerPush)
    .option("-d, --duration <seconds>", "measured time (push, pull)", secondsArg, d.durationSec)
    .option("--warmup <seconds>", "unmeasured time before it", nonNegativeSecondsArg, d.warmupSec)
    .option("--mutator <name>", "one-row mutator (push, wake)", d.mutator)
    .option(
      "--args <json>",
      'its arguments, a JSON template: "$id" becomes the row id, "$n" the mutation\'s number',
      mutationArgsArg,
      d.args,
    )
    .option("--seed-mutator <name>", "many-row mutator, args {prefix, start, count}", d.seedMutator)
    .option("--rows <n>", "rows to write (seed)", integerArg(1), d.rows)
    .option("--repeat <n>", "full pulls to time (full-pull)", integerArg(1, 1000), d.repeat)
    .option(
      "--sockets <n>",
      "wake sockets to open, all of one user (wake; a server holds 100 of a user by default: maxSocketsPerUser)",
      integerArg(1, 50_000),
      d.sockets,
    )
    .option("--rounds <n>", "pushes to time (wake)", integerArg(1, 10_000), d.rounds)
    .option(
      "--namespaces <n>",
      "spread the clients over n namespaces, <url>-1 to <url>-n (push, pull)",
      integerArg(1, 10_000),
      d.namespaces,
    )
    .addHelpText("after", BENCH_HELP);
  defineAction(
    command,
    state,
    async (
      out,
      options: BenchCommandOptions & { mutations: number; duration: number; warmup: number },
      url: URL,
    ) => {
      const benchOptions: BenchOptions = {
        ...options,
        mutationsPerPush: options.mutations,
        durationSec: options.duration,
        warmupSec: options.warmup,
      };
      const ctx = new BenchContext(url, benchOptions, out.errorStream);
      const result = await runMode(ctx);
      out.result(result, renderResult);
      const failed = "errors" in result && result.errors > 0;
      if (failed) out.note(`weir: ${result.errors} requests failed; first: ${result.firstError}`);
      return failed ? EXIT_FAILURE : EXIT_OK;
    },
  );
}

type BenchResult = PushLoadResult | PullLoadResult | FullPullResult | SeedResult | WakeLatencyResult;

/** Each mode loads its code (HTTP and WebSocket clients) only when it runs. */
async function runMode(ctx: BenchContext): Promise<BenchResult> {
  switch (ctx.options.mode) {
    case "push":
      return (await import("../bench/push-load.js")).runPushLoad(ctx);
    case "pull":
      return (await import("../bench/pull-load.js")).runPullLoad(ctx);
    case "full-pull":
      return (await import("../bench/full-pull.js")).runFullPull(ctx);
    case "seed":
      return (await import("../bench/seed.js")).runSeed(ctx);
    case "wake":
      return (await import("../bench/wake-latency.js")).runWakeLatency(ctx);
  }
}

function renderLatency(latency: LatencySummary): string {
  return `latency ms  p50 ${formatNumber(latency.p50Ms)}  p90 ${formatNumber(latency.p90Ms)}  p95 ${formatNumber(latency.p95Ms)}  p99 ${formatNumber(latency.p99Ms)}  max ${formatNumber(latency.maxMs)}`;
}

function renderResult(result: BenchResult): string {
  switch (result.mode) {
    case "push":
      return [
        `push: ${formatNumber(result.mutationsPerSec)} mutations/s (${formatNumber(result.pushesPerSec)} pushes/s), ${result.clients} clients x ${result.mutationsPerPush} mutations per push, ${formatNumber(result.durationSec)} s`,
        renderLatency(result.latency),
        `errors: ${result.errors}`,
      ].join("\n");
    case "pull":
      return [
        `pull: ${formatNumber(result.pullsPerSec)} caught-up pulls/s, ${result.clients} clients, ${formatNumber(result.durationSec)} s`,
        renderLatency(result.latency),
        `errors: ${result.errors}`,
      ].join("\n");
    case "full-pull":
      return `full pull: ${formatNumber(result.rowsPerSec)} rows/s (median of ${result.repeat}; best ${formatNumber(result.bestRowsPerSec)}), ${formatNumber(result.rows)} rows, times ms ${result.timesMs.join(", ")}`;
    case "seed":
      return `seeded ${formatNumber(result.rows)} rows in ${formatNumber(result.mutations)} mutations, ${formatNumber(result.seconds)} s`;
    case "wake":
      return [
        `wake: ${result.sockets} sockets, ${result.rounds} rounds, missed ${result.missed}`,
        `from push ack: ${renderLatency(result.latency)}`,
        `from push sent: ${renderLatency(result.sincePushSent)}`,
      ].join("\n");
  }
}
