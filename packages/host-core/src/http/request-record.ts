/** What a request was, for logs and metrics. */
export type RequestKind =
  | "pull"
  | "push"
  | "replicache_pull"
  | "replicache_push"
  | "wake"
  | "zero"
  | "admin"
  | "notify"
  | "unknown";

/** `ok` 2xx, `client_error` 4xx, `server_error` 5xx. */
export type ResultClass = "ok" | "client_error" | "server_error";

/**
 * One structured log line per request. The namespace appears only as a hash, so logs can be shipped
 * without the names (which may carry tenant names) and still be grouped by namespace.
 */
export interface RequestRecord {
  msg: "request";
  ns?: string;
  kind: RequestKind;
  status: number;
  result: ResultClass;
  error?: string;
  /** The id a 5xx answer carried, to find this line from a client's report. */
  requestId?: string;
  admin?: string;
  cookieIn?: number | null;
  cookieOut?: number;
  reset?: boolean;
  floor?: number;
  watermark?: number;
  puts?: number;
  dels?: number;
  idsAdvanced?: number;
  mutations?: number;
  appErrors?: number;
  txMs?: number;
  /** A query-aware pull: the operations of its query patch, and the rows its evaluations produced and examined. */
  queryOps?: number;
  queryRows?: number;
  /**
   * A pull read in pages: how often a run of it stopped, was rolled back and ran again after a
   * turn (its pages' time was up, or a range passed its step's budget and is read smaller).
   */
  pageTurns?: number;
  /** Rows an ingest pass this request ran (or waited for) applied. */
  ingested?: number;
  totalMs: number;
}

export function resultClass(status: number): ResultClass {
  if (status >= 500) return "server_error";
  if (status >= 400) return "client_error";
  return "ok";
}

const MAX_CACHED_HASHES = 10_000;
const hashes = new Map<string, string>();

/** The namespace's hash if `namespaceHash` computed it already. */
export function knownNamespaceHash(namespace: string): string | undefined {
  return hashes.get(namespace);
}

/**
 * The first 16 hex digits of the namespace's SHA-256. Digests are asynchronous and cost a thread
 * hop, so they are kept (a bounded number).
 */
export async function namespaceHash(namespace: string): Promise<string> {
  const known = hashes.get(namespace);
  if (known !== undefined) return known;
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(namespace));
  let hex = "";
  for (const byte of new Uint8Array(digest).subarray(0, 8)) hex += byte.toString(16).padStart(2, "0");
  if (hashes.size >= MAX_CACHED_HASHES) hashes.clear();
  hashes.set(namespace, hex);
  return hex;
}
