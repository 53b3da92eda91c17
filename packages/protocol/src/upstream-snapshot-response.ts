import * as v from "valibot";
import { JsonValue } from "./fields.js";
import { UpstreamWatermark } from "./upstream-watermark.js";

/** `GET <upstream>/snapshot?table=<name>&limit=<n>&cursor=<opaque>`: a page in primary-key order. */
export const UpstreamSnapshotResponse = v.object({
  watermark: UpstreamWatermark,
  rows: v.array(v.record(v.string(), JsonValue)),
  /** null on the table's last page. */
  nextCursor: v.nullable(v.string()),
});
export type UpstreamSnapshotResponse = v.InferOutput<typeof UpstreamSnapshotResponse>;
