import { randomUUID } from "node:crypto";
import { linkSync, readFileSync, renameSync, unlinkSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { setTimeout as sleep } from "node:timers/promises";

/**
 * Who holds a database file's single-writer lease. Written once, when the lease is taken, into
 * `<db-file>.lease` beside the database.
 */
export interface LeaseHolder {
  pid: number;
  host: string;
  command: string;
  /** ISO timestamp of when the lease was taken. */
  started: string;
  /** Tells this holder's lease apart from a later one by the same process. */
  token: string;
}

export interface LeaseOptions {
  /** What the holder is doing, shown to whoever finds the lease taken. Defaults to this process's argv. */
  command?: string;
  /** How long `acquireLease` waits for a live holder to let go. Default 5,000 ms. */
  waitMs?: number;
  /** A scheduled run yields at once to a live holder instead of waiting. */
  scheduled?: boolean;
  /** How often a waiting acquire looks again. Default 100 ms. */
  pollMs?: number;
}

export interface Lease {
  readonly file: string;
  readonly holder: LeaseHolder;
  /** Removes the lease file if it is still this holder's. Safe to call more than once. */
  release(): void;
}

const DEFAULT_WAIT_MS = 5_000;
const DEFAULT_POLL_MS = 100;

/** Thrown when a live process holds the lease (or the lease file cannot be read). */
export class LeaseHeldError extends Error {
  override readonly name = "LeaseHeldError";
  constructor(
    readonly file: string,
    /** null when the lease file exists but is not a lease this code wrote. */
    readonly holder: LeaseHolder | null,
    /** True when the caller asked to yield at once rather than wait. */
    readonly scheduled: boolean,
  ) {
    super(describeRefusal(file, holder, scheduled));
  }
}

export function leaseFileFor(dbFile: string): string {
  return `${dbFile}.lease`;
}

function describeRefusal(file: string, holder: LeaseHolder | null, scheduled: boolean): string {
  if (!holder) {
    return `lease file ${file} is not readable as a lease; remove it if no process uses the database`;
  }
  const who = `pid ${holder.pid} on ${holder.host} (${holder.command}), since ${holder.started}`;
  return scheduled
    ? `database is in use by ${who}; scheduled run yields`
    : `database is in use by ${who}; stop that process or try again later (lease file ${file})`;
}

type LeaseFileState = { kind: "absent" } | { kind: "held"; holder: LeaseHolder } | { kind: "corrupt" };

function readLeaseFile(file: string): LeaseFileState {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    if (isErrno(error, "ENOENT")) return { kind: "absent" };
    throw error;
  }
  try {
    const value = JSON.parse(text) as Partial<LeaseHolder>;
    if (
      typeof value.pid === "number" &&
      typeof value.host === "string" &&
      typeof value.command === "string" &&
      typeof value.started === "string" &&
      typeof value.token === "string"
    ) {
      return { kind: "held", holder: value as LeaseHolder };
    }
  } catch {
    // falls through: not JSON
  }
  return { kind: "corrupt" };
}

/** The current holder of a database file's lease, or null when nobody holds it. */
export function readLease(dbFile: string): LeaseHolder | null {
  const state = readLeaseFile(leaseFileFor(dbFile));
  return state.kind === "held" ? state.holder : null;
}

/**
 * Whether a holder's process still runs. A process on another host cannot be seen from here,
 * so it counts as alive: only its own host can declare it dead.
 */
export function isHolderAlive(holder: LeaseHolder): boolean {
  if (holder.host !== hostname()) return true;
  if (holder.pid === process.pid) return true;
  try {
    process.kill(holder.pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to another user.
    return !isErrno(error, "ESRCH");
  }
}

/**
 * Takes the lease if it is free or its holder is dead; answers null when a live process holds
 * it. Never waits. Throws LeaseHeldError for a lease file it cannot read.
 */
export function tryAcquireLease(dbFile: string, options: LeaseOptions = {}): Lease | null {
  const file = leaseFileFor(dbFile);
  const holder: LeaseHolder = {
    pid: process.pid,
    host: hostname(),
    command: options.command ?? defaultCommand(),
    started: new Date().toISOString(),
    token: randomUUID(),
  };
  // A lost race (another taker linking first, or a takeover in between) is retried a few times;
  // each retry reads the file again, so it converges on "held by a live process" or "ours".
  for (let attempt = 0; attempt < 5; attempt++) {
    if (linkNewLease(file, holder)) return makeLease(file, holder);
    const state = readLeaseFile(file);
    if (state.kind === "absent") continue;
    if (state.kind === "corrupt") throw new LeaseHeldError(file, null, options.scheduled ?? false);
    if (isHolderAlive(state.holder)) return null;
    removeDeadLease(file, state.holder);
  }
  return null;
}

/**
 * Takes the lease, waiting up to `waitMs` for a live holder to let go (not at all when
 * `scheduled`), then throws LeaseHeldError naming the holder.
 */
export async function acquireLease(dbFile: string, options: LeaseOptions = {}): Promise<Lease> {
  const scheduled = options.scheduled ?? false;
  const waitMs = scheduled ? 0 : (options.waitMs ?? DEFAULT_WAIT_MS);
  const pollMs = options.pollMs ?? DEFAULT_POLL_MS;
  const deadline = Date.now() + waitMs;
  for (;;) {
    const lease = tryAcquireLease(dbFile, options);
    if (lease) return lease;
    if (Date.now() >= deadline) {
      const state = readLeaseFile(leaseFileFor(dbFile));
      // The holder may have let go between our last try and this read: try once more.
      if (state.kind === "absent") {
        const last = tryAcquireLease(dbFile, options);
        if (last) return last;
      }
      throw new LeaseHeldError(leaseFileFor(dbFile), state.kind === "held" ? state.holder : null, scheduled);
    }
    await sleep(Math.min(pollMs, Math.max(1, deadline - Date.now())));
  }
}

/**
 * Creates the lease file with its full content in one step: the holder is written to a private
 * temporary file which is then hard-linked to the lease name. `link` fails if the name exists,
 * so two takers can never both succeed, and a reader never sees a half-written lease.
 */
function linkNewLease(file: string, holder: LeaseHolder): boolean {
  const temp = `${file}.${holder.pid}.${holder.token}.tmp`;
  writeFileSync(temp, `${JSON.stringify(holder)}\n`, { flag: "wx" });
  try {
    linkSync(temp, file);
    return true;
  } catch (error) {
    if (isErrno(error, "EEXIST")) return false;
    throw error;
  } finally {
    unlinkSync(temp);
  }
}

/**
 * Removes a dead holder's lease without ever removing a live one: the file is first renamed to
 * a private name (only one taker's rename can win), then checked; if a live taker's lease was
 * moved by mistake (it replaced the dead one between our read and our rename), it is put back.
 */
function removeDeadLease(file: string, dead: LeaseHolder): void {
  const grave = `${file}.${process.pid}.${randomUUID()}.stale`;
  try {
    renameSync(file, grave);
  } catch (error) {
    if (isErrno(error, "ENOENT")) return;
    throw error;
  }
  const moved = readLeaseFile(grave);
  if (moved.kind === "held" && moved.holder.token !== dead.token) {
    try {
      linkSync(grave, file);
    } catch (error) {
      if (!isErrno(error, "EEXIST")) throw error;
    }
  }
  unlinkSync(grave);
}

function makeLease(file: string, holder: LeaseHolder): Lease {
  let released = false;
  return {
    file,
    holder,
    release() {
      if (released) return;
      released = true;
      const state = readLeaseFile(file);
      if (state.kind !== "held" || state.holder.token !== holder.token) return;
      try {
        unlinkSync(file);
      } catch (error) {
        if (!isErrno(error, "ENOENT")) throw error;
      }
    },
  };
}

function defaultCommand(): string {
  return process.argv
    .slice(1)
    .map((arg, index) => (index === 0 ? arg.split(/[\\/]/).pop() : arg))
    .join(" ");
}

function isErrno(error: unknown, code: string): boolean {
  return error instanceof Error && (error as NodeJS.ErrnoException).code === code;
}
