import { readFileSync } from "node:fs";

/** Descriptors one open namespace may hold: its file, WAL and shared memory, twice (the checkpoint worker's connection), and its lease. */
const DESCRIPTORS_PER_NAMESPACE = 7;
/** Left for sockets, logs and the rest of the process. */
const RESERVED_DESCRIPTORS = 256;
const DEFAULT_MAX_OPEN = 1_000;

/**
 * How many namespaces may be open at once without running out of file descriptors: the process's
 * soft limit (read from /proc on Linux), less a reserve, shared out; at most 1,000. Elsewhere 1,000.
 */
export function defaultMaxOpenNamespaces(limits = "/proc/self/limits"): number {
  let text: string;
  try {
    text = readFileSync(limits, "utf8");
  } catch {
    return DEFAULT_MAX_OPEN;
  }
  const soft = /^Max open files\s+(\d+|unlimited)/m.exec(text)?.[1];
  if (soft === undefined || soft === "unlimited") return DEFAULT_MAX_OPEN;
  const fit = Math.floor((Number(soft) - RESERVED_DESCRIPTORS) / DESCRIPTORS_PER_NAMESPACE);
  return Math.max(1, Math.min(DEFAULT_MAX_OPEN, fit));
}
