import type { UpstreamChange } from "@weir/engine-wasm";
import * as v from "valibot";
import {
  UpstreamCallError,
  type UpstreamChangesPage,
  UpstreamGoneError,
  type UpstreamSnapshotPage,
  type UpstreamSource,
} from "../ports/upstream-source.js";
import { parseRetryAfter } from "./retry-delay.js";

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

const Watermark = v.union([
  v.pipe(v.number(), v.safeInteger(), v.minValue(0)),
  v.pipe(v.string(), v.regex(/^(0|[1-9][0-9]{0,19})$/)),
]);
const Row = v.record(v.string(), v.unknown());
const Change = v.object({
  watermark: v.optional(Watermark),
  tableName: v.string(),
  op: v.picklist(["INSERT", "UPDATE", "DELETE", "TRUNCATE"]),
  rowData: v.nullable(Row),
  oldData: v.nullable(Row),
});
const ChangesAnswer = v.object({ watermark: Watermark, changes: v.array(Change) });
const SnapshotAnswer = v.object({
  watermark: Watermark,
  rows: v.array(Row),
  nextCursor: v.nullable(v.string()),
});
const GoneAnswer = v.object({ oldest: Watermark });

/** An upstream over HTTP, as the upstream contract describes it. */
export function httpUpstream(options: HttpUpstreamOptions): UpstreamSource {
  const send = options.fetch ?? ((url, init) => fetch(url, init));
  const base = options.url.endsWith("/") ? options.url.slice(0, -1) : options.url;
  const headers: Record<string, string> = { accept: "application/json" };
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;

  const get = async (path: string, query: Record<string, string>): Promise<unknown> => {
    const url = `${base}${path}?${new URLSearchParams(query)}`;
    let response: Response;
    try {
      response = await send(url, { headers, signal: AbortSignal.timeout(options.timeoutMs ?? 30_000) });
    } catch (error) {
      throw new UpstreamCallError(502, `upstream unreachable: ${(error as Error).message}`);
    }
    const text = await response.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    if (response.status === 410) {
      const gone = v.safeParse(GoneAnswer, body);
      throw new UpstreamGoneError(gone.success ? BigInt(gone.output.oldest) : 0n);
    }
    if (!response.ok) {
      throw new UpstreamCallError(
        response.status,
        `upstream answered ${response.status} to ${path}`,
        parseRetryAfter(response.headers.get("retry-after"), Date.now()),
      );
    }
    if (body === undefined) throw new UpstreamCallError(502, `upstream answered ${path} with no JSON`);
    return body;
  };

  return {
    async changes(watermark, limit): Promise<UpstreamChangesPage> {
      const answer = v.safeParse(
        ChangesAnswer,
        await get("/changes", { watermark: String(watermark), limit: String(limit) }),
      );
      if (!answer.success)
        throw new UpstreamCallError(
          502,
          `upstream answered /changes in another shape: ${answer.issues[0].message}`,
        );
      return {
        watermark: BigInt(answer.output.watermark),
        changes: answer.output.changes as UpstreamChange[],
      };
    },
    async snapshotPage(table, cursor, limit): Promise<UpstreamSnapshotPage> {
      const query: Record<string, string> = { table, limit: String(limit) };
      if (cursor !== null) query.cursor = cursor;
      const answer = v.safeParse(SnapshotAnswer, await get("/snapshot", query));
      if (!answer.success)
        throw new UpstreamCallError(
          502,
          `upstream answered /snapshot in another shape: ${answer.issues[0].message}`,
        );
      return {
        watermark: BigInt(answer.output.watermark),
        rows: answer.output.rows,
        nextCursor: answer.output.nextCursor,
      };
    },
  };
}
