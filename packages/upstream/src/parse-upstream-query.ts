import { UpstreamCallError } from "@weir/host-core";
import * as v from "valibot";

const MAX_WATERMARK = 2n ** 64n - 1n;

const Watermark = v.pipe(
  v.string("watermark is required"),
  v.regex(/^(0|[1-9][0-9]{0,19})$/, "watermark must be a non-negative decimal integer"),
  v.transform((text: string) => BigInt(text)),
  v.check((value) => value <= MAX_WATERMARK, "watermark is beyond 64 bits"),
);
/** Without a limit a page holds up to 1,000 changes or rows; a page never holds more than 100,000. */
const DEFAULT_LIMIT = 1_000;
const MAX_LIMIT = 100_000;
const Limit = v.optional(
  v.pipe(
    v.string(),
    v.regex(/^[1-9][0-9]{0,8}$/, "limit must be a positive decimal integer"),
    v.transform((text: string) => Number(text)),
    v.maxValue(MAX_LIMIT, `limit is at most ${MAX_LIMIT}`),
  ),
  String(DEFAULT_LIMIT),
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

/** The query string of `/changes` or `/snapshot`, checked; a bad one is a 400 naming the field. */
export function parseUpstreamQuery(route: "changes" | "snapshot", params: URLSearchParams): UpstreamQuery {
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
