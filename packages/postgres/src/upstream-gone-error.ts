import { UpstreamError } from "./upstream-error.js";

/**
 * A watermark older than the oldest the buffer still answers from: the changes after it were
 * pruned by retention, so the namespace must take a fresh snapshot. `oldest` is the lowest
 * watermark `changes` answers from.
 */
export class UpstreamGoneError extends UpstreamError {
  override readonly name = "UpstreamGoneError";
  constructor(
    readonly watermark: bigint,
    readonly oldest: bigint,
  ) {
    super(
      410,
      "gone",
      `watermark ${watermark} is older than the oldest retained, ${oldest}: take a fresh snapshot`,
    );
  }
}
