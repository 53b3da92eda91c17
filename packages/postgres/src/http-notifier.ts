import { encodeWatermark } from "@weir/protocol";

export interface HttpNotifierOptions {
  /** weir's base URL: a namespace's notify route is `<url>/<namespace>/notify`. */
  url: string;
  /** Sent as `Authorization: Bearer <token>`. */
  token?: string;
  /** A call that takes longer is abandoned (and counted as failed). */
  timeoutMs?: number;
}

export interface NotifierStats {
  sent: number;
  failed: number;
  lastError: string | null;
}

export interface HttpNotifier {
  notify(namespaces: Iterable<string>, watermark: bigint): void;
  readonly stats: NotifierStats;
  /** Waits for the calls in flight. */
  close(): Promise<void>;
}

/**
 * Wakes weir after a batch commits to the buffer: `POST <url>/<namespace>/notify` with the
 * batch's watermark. A wake is advisory (weir also ingests on its own schedule), so a failed
 * call is counted and not retried; the next commit wakes again. Calls coalesce per namespace:
 * while one is in flight, later commits wait and send one call with the newest watermark.
 */
export function httpNotifier(options: HttpNotifierOptions): HttpNotifier {
  const base = options.url.replace(/\/+$/, "");
  const timeoutMs = options.timeoutMs ?? 5_000;
  const stats: NotifierStats = { sent: 0, failed: 0, lastError: null };
  const inFlight = new Map<string, Promise<void>>();
  const waiting = new Map<string, bigint>();
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (options.token) headers.authorization = `Bearer ${options.token}`;

  const send = (namespace: string, watermark: bigint): void => {
    const call = (async () => {
      try {
        const response = await fetch(`${base}/${encodeURIComponent(namespace)}/notify`, {
          method: "POST",
          headers,
          body: JSON.stringify({ watermark: encodeWatermark(watermark) }),
          signal: AbortSignal.timeout(timeoutMs),
        });
        await response.arrayBuffer();
        if (!response.ok) throw new Error(`${namespace}/notify answered ${response.status}`);
        stats.sent++;
      } catch (error) {
        stats.failed++;
        stats.lastError = (error as Error).message;
      }
    })();
    inFlight.set(namespace, call);
    call.then(() => {
      inFlight.delete(namespace);
      const next = waiting.get(namespace);
      if (next !== undefined) {
        waiting.delete(namespace);
        send(namespace, next);
      }
    });
  };

  return {
    stats,
    notify(namespaces, watermark) {
      for (const namespace of namespaces) {
        if (inFlight.has(namespace)) waiting.set(namespace, watermark);
        else send(namespace, watermark);
      }
    },
    async close() {
      while (inFlight.size > 0) await Promise.all(inFlight.values());
    },
  };
}
