import type { AudienceProbe } from "@weir/engine-wasm";
import {
  AudienceIndex,
  errorResponse,
  type Subscription,
  TooManySockets,
  type Wake,
  type WakeAudience,
  type WakeTarget,
} from "@weir/host-core";
import { type EdgeUserSockets, userTag } from "./user-sockets.js";
import { isZeroSocket, ZERO_TAG } from "./zero-sockets.js";

/**
 * What a wake socket carries through hibernation: whose it is, and what it must be woken for
 * (none when its subscription would not fit the platform's 2 KiB: it is then woken by every
 * commit).
 */
export interface WakeAttachment {
  clientID: string;
  userID: string;
  subscription?: Subscription;
}

/** A socket's attachment may be at most 2,048 bytes on Cloudflare (as serialized). */
const MAX_ATTACHMENT_BYTES = 2_048;

/** The message a client sends to check its socket, and the answer, given without waking the object. */
export const PING = "ping";
export const PONG = "pong";

/**
 * Wake sockets on the Hibernation API: the platform holds them while the object sleeps, answers
 * `ping` with `pong` itself, and hands them back (with their tags and attachment) when it wakes.
 * A socket's tags are its client id and its user's tag (Zero's sockets, which share the object,
 * start with `ZERO_TAG`). The object's instance indexes them by subscription (`AudienceIndex`),
 * rebuilt from the attachments the first time a woken instance needs it.
 */
export class HibernatableWake implements Wake {
  private index: AudienceIndex<WebSocket> | null = null;
  private readonly clientIDs = new WeakMap<WebSocket, string>();

  constructor(
    private readonly ctx: DurableObjectState,
    private readonly users: EdgeUserSockets,
  ) {}

  /**
   * Accepts the wake socket host-core authenticated: a hibernatable socket, answered with 101,
   * or 429 `too_many_sockets` when its user holds as many as one may.
   */
  async accept(target: WakeTarget): Promise<Response> {
    const tag = await userTag(target.claims.userID);
    let release: () => void;
    try {
      release = this.users.admit(tag);
    } catch (error) {
      if (!(error instanceof TooManySockets)) throw error;
      return errorResponse(error.status, error.code, error.message, error.headers);
    }
    const [client, server] = Object.values(new WebSocketPair()) as [WebSocket, WebSocket];
    try {
      this.ctx.acceptWebSocket(server, [target.clientID, tag]);
    } finally {
      release();
    }
    const attachment: WakeAttachment = {
      clientID: target.clientID,
      userID: target.claims.userID,
      subscription: target.subscription,
    };
    const fits = new TextEncoder().encode(JSON.stringify(attachment)).length <= MAX_ATTACHMENT_BYTES;
    if (!fits) delete attachment.subscription;
    server.serializeAttachment(attachment);
    // An index not built yet is built from every socket, this one included.
    if (this.index) this.add(this.index, server, attachment);
    return new Response(null, { status: 101, webSocket: client });
  }

  /** A wake socket closed: it leaves the index. */
  closed(ws: WebSocket): void {
    this.index?.remove(ws);
  }

  send(_namespace: string, audience: WakeAudience, exceptClientID: string | null): number {
    let sent = 0;
    for (const ws of this.sockets().select(audience)) {
      if (ws.readyState !== WebSocket.READY_STATE_OPEN) continue;
      if (exceptClientID !== null && this.clientIDs.get(ws) === exceptClientID) continue;
      try {
        ws.send("wake");
        sent++;
      } catch {
        // A socket that closed meanwhile; its close handler tidies up.
      }
    }
    return sent;
  }

  probes(): ReadonlyMap<string, AudienceProbe> {
    return this.sockets().probes();
  }

  count(): number {
    const zero = this.ctx.getWebSockets(ZERO_TAG).filter((ws) => isZeroSocket(this.ctx.getTags(ws))).length;
    return this.ctx.getWebSockets().length - zero;
  }

  private sockets(): AudienceIndex<WebSocket> {
    if (this.index) return this.index;
    const index = new AudienceIndex<WebSocket>();
    for (const ws of this.ctx.getWebSockets()) {
      if (ws.readyState !== WebSocket.READY_STATE_OPEN || isZeroSocket(this.ctx.getTags(ws))) continue;
      const attachment = ws.deserializeAttachment() as WakeAttachment | null;
      this.add(index, ws, attachment ?? { clientID: this.ctx.getTags(ws)[0] ?? "", userID: "" });
    }
    this.index = index;
    return index;
  }

  private add(index: AudienceIndex<WebSocket>, ws: WebSocket, attachment: WakeAttachment): void {
    this.clientIDs.set(ws, attachment.clientID);
    index.add(ws, attachment.subscription ?? { userID: attachment.userID, terms: null });
  }
}

/** Codes that only describe what happened (RFC 6455 7.4.1) and that workerd refuses to send. */
const RESERVED_CLOSE_CODES = new Set([1004, 1005, 1006, 1015]);

/** Whether a close code may be sent back as it came: the registered ones and 3000-4999. */
function echoableCloseCode(code: number): boolean {
  return (code >= 1000 && code <= 1014 && !RESERVED_CLOSE_CODES.has(code)) || (code >= 3000 && code <= 4999);
}

/**
 * Completes a close the client started. A code that describes rather than says (1005: none was
 * given, 1006: the connection dropped) cannot be sent back, so those get 1000. Answers what went
 * wrong, if anything, for the caller to log: a handler's exception would otherwise vanish.
 */
export function closeQuietly(ws: WebSocket, code: number, reason: string): unknown {
  if (ws.readyState === WebSocket.READY_STATE_CLOSED) return undefined;
  const echo = echoableCloseCode(code);
  try {
    ws.close(echo ? code : 1000, echo ? reason.slice(0, 120) : "");
    return undefined;
  } catch (error) {
    return error;
  }
}
