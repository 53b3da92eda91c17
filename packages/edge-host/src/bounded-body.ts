/**
 * How much of a refused body the Worker still reads and throws away. A client that is still
 * sending when the answer comes and the connection closes sees it reset rather than the 413; read
 * to the end, it gets the answer. Past this much it is cut off anyway.
 */
const DRAIN_LIMIT_BYTES = 64 * 1024 * 1024;

/**
 * The request's body read whole, or null when it is larger than `maxBytes`. A larger body is
 * read to its end (up to DRAIN_LIMIT_BYTES) and discarded, so the refusal reaches the client;
 * nothing of it is buffered.
 */
export async function readBoundedBody(
  body: ReadableStream<Uint8Array>,
  maxBytes: number,
): Promise<Uint8Array | null> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > DRAIN_LIMIT_BYTES) {
        await reader.cancel();
        return null;
      }
      if (total <= maxBytes) chunks.push(value);
      else chunks.length = 0;
    }
  } finally {
    reader.releaseLock();
  }
  if (total > maxBytes) return null;
  return new Uint8Array(await new Blob(chunks).arrayBuffer());
}
