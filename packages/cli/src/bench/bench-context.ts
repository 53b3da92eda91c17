import { randomBytes } from "node:crypto";
import { DEFAULT_ARGS_TEMPLATE, type MutationArgs, mutationArgsArg } from "./mutation-args.js";
import { type BenchDialect, SyncTarget } from "./sync-target.js";

export type BenchMode = "push" | "pull" | "full-pull" | "seed" | "wake";

export interface BenchOptions {
  mode: BenchMode;
  dialect: BenchDialect;
  /** Sent as the Authorization header. */
  auth: string;
  clients: number;
  mutationsPerPush: number;
  durationSec: number;
  warmupSec: number;
  /** Writes one row from `args` (by default `{ id, value }`). */
  mutator: string;
  /** The arguments of each mutation `mutator` is sent. */
  args: MutationArgs;
  /** Writes `count` rows from `{ prefix, start, count }`. */
  seedMutator: string;
  rows: number;
  repeat: number;
  sockets: number;
  rounds: number;
  /** Clients spread over this many namespaces, `<ns>-1` to `<ns>-<n>` (push, pull; 1: the URL's own). */
  namespaces: number;
}

export const DEFAULT_BENCH_OPTIONS: Omit<BenchOptions, "mode"> = {
  dialect: "replicache",
  auth: "bench",
  clients: 32,
  mutationsPerPush: 10,
  durationSec: 10,
  warmupSec: 1,
  mutator: "benchPut",
  args: mutationArgsArg(DEFAULT_ARGS_TEMPLATE),
  seedMutator: "benchSeed",
  rows: 100_000,
  repeat: 3,
  // As many as a server holds of one user by default (node-host's maxSocketsPerUser).
  sockets: 100,
  rounds: 20,
  namespaces: 1,
};

/** What every bench mode shares: the target, a run id that keeps client ids unique, where progress goes. */
export class BenchContext {
  /** Client and group ids carry it, so that runs against one database never collide. */
  readonly runID = `b${Date.now().toString(36)}${randomBytes(3).toString("hex")}`;

  constructor(
    readonly url: URL,
    readonly options: BenchOptions,
    readonly progressStream: NodeJS.WritableStream & { isTTY?: boolean } = process.stderr,
  ) {}

  /** Client `index`'s target: the URL's namespace, or with `namespaces` one of `<ns>-1..n` in turn. */
  target(index = 0): SyncTarget {
    const { namespaces } = this.options;
    if (namespaces <= 1) return new SyncTarget(this.url, this.options.dialect, this.options.auth);
    const url = new URL(`${this.url.href}-${(index % namespaces) + 1}`);
    return new SyncTarget(url, this.options.dialect, this.options.auth);
  }
}
