import { nextTurn } from "../flows/next-turn.js";
import { HttpError } from "./http-error.js";
import type { RequestParts } from "./http-parts.js";
import { loneSurrogateMessage, loneSurrogatePath } from "./lone-surrogate.js";
import { parseJsonSliced, SLICED_JSON_CHARS } from "./sliced-json.js";

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;
const UTF8 = new TextDecoder("utf-8", { fatal: true });

/**
 * Reads a JSON body of at most `maxBytes`, counting as it reads so a body that lies about its
 * length (or sends none) cannot make the server buffer more. `optional` accepts an empty body.
 * A body the host has read already is parsed at once (no promise), unless it is large enough to
 * be parsed in slices; otherwise the answer is one.
 */
export function readJsonBody(parts: RequestParts, maxBytes: number, optional = false): unknown {
  const declared = parts.headers.get("content-length");
  if (declared !== null && Number(declared) > maxBytes) throw tooLarge(maxBytes);
  if (parts.body !== undefined) return parseJsonBody(parts, parts.body, maxBytes, optional);
  return readRequestBody(parts.request(), declared, maxBytes).then((bytes) =>
    parseJsonBody(parts, bytes, maxBytes, optional),
  );
}

function parseJsonBody(
  parts: RequestParts,
  bytes: Uint8Array | null,
  maxBytes: number,
  optional: boolean,
): unknown {
  if (bytes === null || bytes.length === 0) {
    if (optional) return undefined;
    throw new HttpError("bad_request", "a JSON body is required");
  }
  if (bytes.length > maxBytes) throw tooLarge(maxBytes);
  const type = parts.headers.get("content-type");
  if (type !== "application/json" && (!type || !JSON_TYPE.test(type))) {
    throw new HttpError("unsupported_media_type", "the body must be JSON (content-type: application/json)");
  }
  let text: string;
  try {
    text = UTF8.decode(bytes);
  } catch {
    throw new HttpError("bad_request", "the body is not valid UTF-8");
  }
  // A large body is parsed in slices, other requests served between them (sliced-json.ts).
  if (text.length >= SLICED_JSON_CHARS) {
    return parseJsonSliced(text, nextTurn).then(
      (value) => checked(text, value),
      (error: unknown) => {
        throw malformed(error);
      },
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw malformed(error);
  }
  return checked(text, value);
}

function malformed(error: unknown): HttpError {
  return new HttpError("bad_request", `malformed JSON: ${(error as Error).message}`);
}

/** The parsed body, unless a string or key in it holds a lone surrogate. */
function checked(text: string, value: unknown): unknown {
  // Only a JSON escape can make a lone surrogate (lone-surrogate.ts).
  if (text.includes("\\u")) {
    const at = loneSurrogatePath(value, "");
    if (at !== null) throw new HttpError("bad_request", loneSurrogateMessage(at || "the body"));
  }
  return value;
}

/**
 * A declared length is enforced by the HTTP layer, so such a body can be taken whole (faster);
 * without one (chunked), count while reading.
 */
async function readRequestBody(
  request: Request,
  declared: string | null,
  maxBytes: number,
): Promise<Uint8Array> {
  if (!request.body) return new Uint8Array(0);
  if (declared !== null) return new Uint8Array(await request.arrayBuffer());
  return readAtMost(request.body, maxBytes);
}

async function readAtMost(body: ReadableStream<Uint8Array>, maxBytes: number): Promise<Uint8Array> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => {});
      throw tooLarge(maxBytes);
    }
    chunks.push(value);
  }
  if (chunks.length === 1) return chunks[0]!;
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}

export function tooLarge(maxBytes: number): HttpError {
  return new HttpError("payload_too_large", `the body is larger than ${maxBytes} bytes`);
}
