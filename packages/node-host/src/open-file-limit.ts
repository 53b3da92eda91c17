import { readFileSync } from "node:fs";

/** Descriptors one open namespace may hold: its file, WAL and shared memory, twice (the checkpoint worker's connection), and its lease. */
const DESCRIPTORS_PER_NAMESPACE = 7;
/** Left for sockets, logs and the rest of the process. */
const RESERVED_DESCRIPTORS = 256;
const DEFAULT_MAX_OPEN = 1_000;

/** The fewest sockets the descriptor limit leaves room for, however low it is. */
const MIN_SOCKETS = 64;

/** The process's soft limit on open files, from /proc on Linux; null where unknown or unlimited. */
function openFileLimit(limits: string): number | null {
  let text: string;
  try {
    text = readFileSync(limits, "utf8");
  } catch {
    return null;
  }
  const soft = /^Max open files\s+(\d+|unlimited)/m.exec(text)?.[1];
  return soft === undefined || soft === "unlimited" ? null : Number(soft);
}

/**
 * How many namespaces may be open at once without running out of file descriptors: the process's
 * soft limit (read from /proc on Linux), less a reserve, shared out; at most 1,000. Elsewhere 1,000.
 */
export function defaultMaxOpenNamespaces(limits = "/proc/self/limits"): number {
  const soft = openFileLimit(limits);
  if (soft === null) return DEFAULT_MAX_OPEN;
  const fit = Math.floor((soft - RESERVED_DESCRIPTORS) / DESCRIPTORS_PER_NAMESPACE);
  return Math.max(1, Math.min(DEFAULT_MAX_OPEN, fit));
}

/**
 * How many wake and Zero sockets may be open at once: the descriptors the soft limit leaves once
 * `maxOpenNamespaces` namespaces and the reserve have theirs (at least 64). Null (no cap) where the
 * limit is unknown or unlimited. Past it, sockets would take the descriptors that requests and
 * namespace files need, and every tenant's requests would fail.
 */
export function defaultMaxSockets(maxOpenNamespaces: number, limits = "/proc/self/limits"): number | null {
  const soft = openFileLimit(limits);
  if (soft === null) return null;
  return Math.max(MIN_SOCKETS, soft - RESERVED_DESCRIPTORS - maxOpenNamespaces * DESCRIPTORS_PER_NAMESPACE);
}
