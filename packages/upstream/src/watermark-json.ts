const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** A watermark as the contract sends it: a JSON number while safe, a decimal string beyond. */
export function watermarkJson(watermark: bigint): number | string {
  return watermark <= MAX_SAFE ? Number(watermark) : watermark.toString();
}
