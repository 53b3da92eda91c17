import * as v from "valibot";
import { DEFAULT_UPSTREAM_LIMIT, MAX_UPSTREAM_LIMIT } from "./limits.js";
import { UpstreamCallError } from "./upstream-source.js";

const MAX_WATERMARK = 2n ** 64n - 1n;

const Watermark = v.pipe(
  v.string("watermark is required"),
  v.regex(/^(0|[1-9][0-9]{0,19})$/, "watermark must be a non-negative decimal integer"),
  v.transform((text: string) => BigInt(text)),
  v.check((value) => value <= MAX_WATERMARK, "watermark is beyond 64 bits"),
);
const Limit = v.optional(
  v.pipe(
    v.string(),
    v.regex(/^[1-9][0-9]{0,8}$/, "limit must be a positive decimal integer"),
    v.transform((text: string) => Number(text)),
    v.maxValue(MAX_UPSTREAM_LIMIT, `limit is at most ${MAX_UPSTREAM_LIMIT}`),
  ),
  String(DEFAULT_UPSTREAM_LIMIT),
);

const ChangesQuery = v.object({ watermark: Watermark, limit: Limit });
const SnapshotQuery = v.object({
  table: v.pipe(v.string("table is required"), v.minLength(1, "table is required")),
  limit: Limit,
  cursor: v.optional(v.pipe(v.string(), v.maxLength(4096, "cursor is too long"))),
});

export type UpstreamQuery =
  | { route: "changes"; watermark: bigint; limit: number }
  | { route: "snapshot"; table: string; limit: number; cursor: string | null };

/**
 * The query string of `/changes` or `/snapshot` (a URLSearchParams, say), checked; a bad one is
 * an UpstreamCallError 400 naming the field.
 */
export function parseUpstreamQuery(
  route: "changes" | "snapshot",
  params: Iterable<readonly [string, string]>,
): UpstreamQuery {
  const input = Object.fromEntries(params);
  const result = v.safeParse(route === "changes" ? ChangesQuery : SnapshotQuery, input);
  if (!result.success) throw new UpstreamCallError(400, "bad_request", result.issues[0].message);
  if (route === "changes") {
    const { watermark, limit } = result.output as v.InferOutput<typeof ChangesQuery>;
    return { route, watermark, limit };
  }
  const { table, limit, cursor } = result.output as v.InferOutput<typeof SnapshotQuery>;
  return { route, table, limit, cursor: cursor ?? null };
}
