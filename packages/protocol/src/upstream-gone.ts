import * as v from "valibot";
import { UpstreamWatermark } from "./upstream-watermark.js";

/** 410 from `/changes`: the watermark is older than what the upstream retains; resnapshot. */
export const UpstreamGone = v.object({
  error: v.literal("gone"),
  oldest: UpstreamWatermark,
});
export type UpstreamGone = v.InferOutput<typeof UpstreamGone>;
