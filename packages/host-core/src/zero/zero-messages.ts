import { parseZeroUpstream, type ZeroUpstream } from "@weir/protocol";
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
