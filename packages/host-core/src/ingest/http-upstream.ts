import {
  parse,
  parseRetryAfter,
  UpstreamCallError,
  UpstreamChangesResponse,
  UpstreamGone,
  UpstreamGoneError,
  UpstreamSnapshotResponse,
  type UpstreamSource,
} from "@weir/protocol";
import type { GenericSchema, InferOutput } from "valibot";

/** What a call reaches the upstream through: `fetch`, or a Workers service binding's. */
export type UpstreamFetch = (url: string, init: RequestInit) => Promise<Response>;

export interface HttpUpstreamOptions {
  /** The namespace's upstream base URL: `/changes` and `/snapshot` are under it. */
  url: string;
  /** Sent as `Authorization: Bearer <token>`. */
  token?: string;
  fetch?: UpstreamFetch;
  /** One call's time limit (default 30 s). */
  timeoutMs?: number;
}

/** An upstream over HTTP, as the upstream contract describes it; answers are checked against it. */
export function httpUpstream(options: HttpUpstreamOptions): UpstreamSource {
  const send = options.fetch ?? ((url, init) => fetch(url, init));
  const base = options.url.endsWith("/") ? options.url.slice(0, -1) : options.url;
  const headers: Record<string, string> = { accept: "application/json" };
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;

  const get = async <S extends GenericSchema>(
    path: string,
    query: Record<string, string>,
    schema: S,
  ): Promise<InferOutput<S>> => {
    const url = `${base}${path}?${new URLSearchParams(query)}`;
    let response: Response;
    try {
      response = await send(url, { headers, signal: AbortSignal.timeout(options.timeoutMs ?? 30_000) });
    } catch (error) {
      throw new UpstreamCallError(
        502,
        "upstream_unavailable",
        `upstream unreachable: ${(error as Error).message}`,
      );
    }
    const text = await response.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    if (response.status === 410) {
      const gone = parse(UpstreamGone, body);
      throw new UpstreamGoneError(gone.ok ? gone.value.oldest : 0n);
    }
    if (!response.ok) {
      const refusal = body as { error?: unknown; message?: unknown } | undefined;
      const code = typeof refusal?.error === "string" ? refusal.error : "upstream";
      const why = typeof refusal?.message === "string" ? `: ${refusal.message.slice(0, 500)}` : "";
      throw new UpstreamCallError(
        response.status,
        code,
        `upstream answered ${response.status} to ${path}${why}`,
        parseRetryAfter(response.headers.get("retry-after"), Date.now()),
      );
    }
    const answer = parse(schema, body);
    if (!answer.ok) {
      throw new UpstreamCallError(
        502,
        "upstream_invalid",
        `upstream answered ${path} in another shape: ${answer.message}`,
      );
    }
    return answer.value;
  };

  return {
    changes: (watermark, limit) =>
      get("/changes", { watermark: String(watermark), limit: String(limit) }, UpstreamChangesResponse),
    snapshotPage(table, cursor, limit) {
      const query: Record<string, string> = { table, limit: String(limit) };
      if (cursor !== null) query.cursor = cursor;
      return get("/snapshot", query, UpstreamSnapshotResponse);
    },
  };
}
