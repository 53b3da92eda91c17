import * as v from "valibot";

/**
 * A watermark of an upstream: a positive integer, monotonic per upstream, sent as a JSON number
 * while it is a safe integer and as a decimal string beyond (PostgreSQL commit LSNs are 64-bit).
 * Read as a bigint.
 */
export const UpstreamWatermark = v.union([
  v.pipe(
    v.number(),
    v.safeInteger(),
    v.minValue(0),
    v.transform((value: number) => BigInt(value)),
  ),
  v.pipe(
    v.string(),
    v.regex(/^(0|[1-9][0-9]{0,19})$/),
    v.transform((text: string) => BigInt(text)),
    v.check((value: bigint) => value < 2n ** 64n, "watermark is beyond 64 bits"),
  ),
]);
export type UpstreamWatermark = v.InferOutput<typeof UpstreamWatermark>;

/** A watermark as the contract sends it: a JSON number while safe, a decimal string beyond. */
export function encodeWatermark(watermark: bigint): number | string {
  return watermark <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(watermark) : watermark.toString();
}
