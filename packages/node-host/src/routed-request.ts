import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { writeRawAnswer } from "./http-bridge.js";
import { targetNamespace } from "./target-namespace.js";
import type { WsWake } from "./wake.js";
import type { Routed, WorkerPool } from "./worker-pool.js";
import type { WsZero } from "./zero-sockets.js";

/** Sends a Node request, with its body as read, to the worker of its namespace. */
export function relayRequest(
  pool: WorkerPool,
  req: IncomingMessage,
  body: Buffer | null,
): Promise<Routed> & { id: number } {
  const id = pool.id();
  const headers: [string, string][] = [];
  for (const name in req.headers) {
    const value = req.headers[name];
    if (value !== undefined) headers.push([name, Array.isArray(value) ? value.join(", ") : value]);
  }
  const method = req.method ?? "GET";
  const answer = pool.request(targetNamespace(req.url), {
    id,
    method,
    url: `http://localhost${req.url ?? "/"}`,
    headers,
    body: body !== null && method !== "GET" && method !== "HEAD" ? body : null,
  });
  return Object.assign(answer, { id });
}

/**
 * An upgrade on the routing thread: the worker of its namespace authenticates and routes it; a
 * wake socket or a Zero connection it accepts becomes a `ws` socket here, whose frames are
 * relayed to that worker.
 */
export async function relayUpgrade(
  pool: WorkerPool,
  wake: WsWake,
  zero: WsZero,
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
): Promise<void> {
  if (!req.url?.startsWith("/")) {
    writeRawAnswer(
      socket,
      400,
      JSON.stringify({ error: "bad_request", message: "the request target must be a path" }),
    );
    return;
  }
  const relayed = relayRequest(pool, req, null);
  const { answer, thread } = await relayed;
  if (answer.upgrade) {
    wake.accept(req, socket, head, answer.upgrade);
    return;
  }
  if (answer.zero) {
    const upgrade = pool.zeroUpgrade(targetNamespace(req.url), thread, relayed.id, answer.zero);
    let opened = false;
    const open = upgrade.open;
    upgrade.open = (ws) => {
      opened = true;
      return open(ws);
    };
    // An upgrade that never completes (the client left) lets the worker forget it.
    socket.once("close", () => {
      if (!opened) upgrade.abandoned();
    });
    zero.accept(req, socket, head, upgrade);
    return;
  }
  writeRawAnswer(socket, answer.status, answer.body ?? "");
}
