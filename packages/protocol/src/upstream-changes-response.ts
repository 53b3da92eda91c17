import * as v from "valibot";
import { UpstreamChange } from "./upstream-change.js";
import { UpstreamWatermark } from "./upstream-watermark.js";

/**
 * `GET <upstream>/changes?watermark=<n>&limit=<n>`: whole transactions in commit order (an answer
 * may exceed the limit to finish one), and the watermark everything up to is included.
 */
export const UpstreamChangesResponse = v.object({
  watermark: UpstreamWatermark,
  changes: v.array(UpstreamChange),
});
export type UpstreamChangesResponse = v.InferOutput<typeof UpstreamChangesResponse>;
