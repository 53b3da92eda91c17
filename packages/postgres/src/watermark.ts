/**
 * A watermark on the wire: a JSON number while it is a safe integer, a decimal string beyond
 * (commit LSNs are 64-bit, so a long-lived server passes 2^53 after 8 PiB of WAL).
 */
export function encodeWatermark(watermark: bigint): number | string {
  return watermark <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(watermark) : watermark.toString();
}
