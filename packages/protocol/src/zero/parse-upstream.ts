import * as v from "valibot";
import type { ParseResult } from "../parse.js";
import { ZERO_UPSTREAM_BODIES, type ZeroUpstream } from "./up.js";

const NOT_A_MESSAGE = "a message is a JSON array [type, body]";

/**
 * A socket frame as a client's message, or why it is not one: not a JSON array `[type, body]`,
 * an unknown type, or a malformed body (the message names the type and the first bad field).
 */
export function parseZeroUpstream(frame: string): ParseResult<ZeroUpstream> {
  let json: unknown;
  try {
    json = JSON.parse(frame);
  } catch {
    return { ok: false, message: NOT_A_MESSAGE };
  }
  return checkZeroUpstream(json);
}

/** A frame's parsed JSON as a client's message, or why it is not one (as `parseZeroUpstream`). */
export function checkZeroUpstream(json: unknown): ParseResult<ZeroUpstream> {
  if (!Array.isArray(json) || json.length !== 2 || typeof json[0] !== "string") {
    return { ok: false, message: NOT_A_MESSAGE };
  }
  const type = json[0];
  if (!Object.hasOwn(ZERO_UPSTREAM_BODIES, type)) {
    return { ok: false, message: `unknown message type ${JSON.stringify(type.slice(0, 64))}` };
  }
  const result = v.safeParse(ZERO_UPSTREAM_BODIES[type as keyof typeof ZERO_UPSTREAM_BODIES], json[1]);
  if (!result.success) {
    return { ok: false, message: `${type}: ${v.summarize(result.issues).slice(0, 500)}` };
  }
  return { ok: true, value: [type, result.output] as ZeroUpstream };
}
