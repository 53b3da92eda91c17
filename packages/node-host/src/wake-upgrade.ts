import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { jsonParts, type WeirHost } from "@weir/host-core";
import { toParts, writeRawAnswer } from "./http-bridge.js";
import type { WsWake } from "./wake.js";
import type { WsZero } from "./zero-sockets.js";

/**
 * An upgrade request: host-core routes and authenticates it like any request; a wake socket or a
 * Zero connection it accepts becomes a `ws` socket on the raw connection, and anything else is
 * answered on it.
 */
export async function answerWakeUpgrade(
  weir: WeirHost,
  wake: WsWake,
  zero: WsZero,
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
): Promise<void> {
  const parts = toParts(req, null);
  const answer = parts
    ? await weir.handleParts(parts)
    : jsonParts({ error: "bad_request", message: "the request target must be a path" }, 400);
  if (answer.upgrade) {
    wake.accept(req, socket, head, answer.upgrade);
    return;
  }
  if (answer.zero) {
    zero.accept(req, socket, head, answer.zero);
    return;
  }
  writeRawAnswer(socket, answer.status, answer.body ?? "");
}
