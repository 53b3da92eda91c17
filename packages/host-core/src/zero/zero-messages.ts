import { checkZeroUpstream, parseZeroUpstream, type ZeroUpstream } from "@weir/protocol";
import { nextTurn } from "../flows/next-turn.js";
import { parseJsonSliced, SLICED_JSON_CHARS } from "../http/sliced-json.js";
import { ZeroError } from "./zero-error.js";

/**
 * A frame of the socket as a client's message (`@weir/protocol`'s Zero wire), or the
 * InvalidMessage error that answers it.
 */
export function parseZeroMessage(frame: string): ZeroUpstream {
  const parsed = parseZeroUpstream(frame);
  if (!parsed.ok) throw new ZeroError("InvalidMessage", parsed.message);
  return parsed.value;
}

/**
 * `parseZeroMessage`, a large frame's JSON parsed in slices (as a large HTTP body is), the event
 * loop having its turn between them.
 */
export async function readZeroMessage(frame: string): Promise<ZeroUpstream> {
  if (frame.length < SLICED_JSON_CHARS) return parseZeroMessage(frame);
  let json: unknown;
  try {
    json = await parseJsonSliced(frame, nextTurn);
  } catch {
    // Not JSON: the message parseZeroMessage gives.
    return parseZeroMessage(frame);
  }
  const parsed = checkZeroUpstream(json);
  if (!parsed.ok) throw new ZeroError("InvalidMessage", parsed.message);
  return parsed.value;
}
