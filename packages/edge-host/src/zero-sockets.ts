import {
  CLOSE_PROTOCOL_ERROR,
  type Logger,
  refusedZeroUpgrade,
  TooManySockets,
  type ZeroConnectionState,
  ZeroError,
  type ZeroHub,
  type ZeroSocket,
  type ZeroSocketHandler,
  type ZeroUpgrade,
} from "@weir/host-core";
import { type EdgeUserSockets, USER_TAG_PREFIX, userTag } from "./user-sockets.js";

/**
 * A Zero socket's first tag; its second is the socket's own key, its third its user's tag. A
 * wake socket's tags are its client id and its user's tag, which tells the two apart whatever a
 * client id is (sockets accepted before user tags have one tag and two).
 */
export const ZERO_TAG = "weir:zero";

/** The Zero client's keepalive and its answer, as the platform may answer them (`autoResponse`). */
export const ZERO_PING = JSON.stringify(["ping", {}]);
export const ZERO_PONG = JSON.stringify(["pong", {}]);

/** A socket's attachment may be at most 2,048 bytes on Cloudflare (as serialized; JSON is counted). */
const MAX_ATTACHMENT_BYTES = 2_048;
const encoder = new TextEncoder();

/** The close code of a frame past the limit, as `ws` sends it on Node. */
const CLOSE_MESSAGE_TOO_BIG = 1009;

/**
 * A frame's size in bytes as it came (UTF-8 for text), counted only when its length in UTF-16
 * units leaves it in doubt: each unit is one to three bytes.
 */
function frameBytes(message: string | ArrayBuffer, limit: number): number {
  if (typeof message !== "string") return message.byteLength;
  if (message.length > limit || message.length * 3 <= limit) return message.length;
  return encoder.encode(message).byteLength;
}

/** What a Zero socket carries through hibernation: its connection's state, once it has one. */
interface ZeroAttachment {
  zero: ZeroConnectionState | null;
}

/** Whether the socket is a Zero socket (and not a wake socket). */
export function isZeroSocket(tags: readonly string[]): boolean {
  if (tags[0] !== ZERO_TAG) return false;
  return tags.length === 3 || (tags.length === 2 && !tags[1]!.startsWith(USER_TAG_PREFIX));
}

/**
 * Zero's WebSockets on the Hibernation API. Each connection's state is the socket's attachment,
 * saved whenever it changes (host-core's `ZeroSocket.save`), so that an object woken from
 * hibernation (a new instance, the sockets still open) rebuilds its hub from them: the
 * connections are restored on the first event that needs them, and their next poke follows on
 * from the cookie they were last poked at.
 */
export class HibernatableZero {
  /** The connections of this instance, by their socket's key. */
  private readonly handlers = new Map<string, ZeroSocketHandler>();
  /** The hub the sockets' connections were restored into (another one after a failure). */
  private restoredInto: ZeroHub | null = null;

  constructor(
    private readonly ctx: DurableObjectState,
    private readonly logger: Logger,
    private readonly users: EdgeUserSockets,
  ) {}

  /**
   * Accepts the connection host-core answered, answered with 101. What it sends while opening is
   * held until it is opened: an open connection's socket is then accepted as hibernatable, a
   * refused one's as a plain socket that sends the refusal and closes (a hibernatable socket
   * closed before its 101 went out lingers until the platform's close timeout). A user who holds
   * as many sockets as one may is refused before the connection opens (`ServerOverloaded`).
   */
  async accept(offered: ZeroUpgrade): Promise<Response> {
    let upgrade = offered;
    let tag: string | null = null;
    let release = () => {};
    if (upgrade.userID !== null) {
      tag = await userTag(upgrade.userID);
      try {
        release = this.users.admit(tag);
      } catch (error) {
        if (!(error instanceof TooManySockets)) throw error;
        upgrade = refusedZeroUpgrade(upgrade.protocol, error);
        tag = null;
      }
    }
    try {
      return await this.connect(upgrade, tag);
    } finally {
      release();
    }
  }

  /** Opens the connection and answers its 101 (see `accept`); `tag`: its user's, if counted. */
  private async connect(upgrade: ZeroUpgrade, tag: string | null): Promise<Response> {
    const [client, server] = Object.values(new WebSocketPair()) as [WebSocket, WebSocket];
    const live = this.socket(server);
    const held: { frames: string[]; close: { code: number; reason: string } | null; state: unknown } = {
      frames: [],
      close: null,
      state: null,
    };
    let opened = false;
    const socket: ZeroSocket = {
      send: (frame) => (opened ? live.send(frame) : held.frames.push(frame)),
      close: (code, reason) => {
        if (opened) live.close(code, reason);
        else held.close ??= { code, reason };
      },
      save: (state) => {
        if (opened) live.save!(state);
        else held.state = state;
      },
    };
    let handler: ZeroSocketHandler | null = null;
    try {
      handler = await upgrade.open(socket);
    } catch (error) {
      this.logger.log("error", { msg: "opening a zero connection failed", error: String(error) });
      held.close ??= { code: 1011, reason: "server error" };
    }
    if (handler && held.close === null) {
      const key = crypto.randomUUID();
      this.ctx.acceptWebSocket(server, tag === null ? [ZERO_TAG, key] : [ZERO_TAG, key, tag]);
      live.save!(held.state as ZeroConnectionState);
      for (const frame of held.frames) live.send(frame);
      opened = true;
      this.handlers.set(key, handler);
    } else {
      server.accept();
      for (const frame of held.frames) server.send(frame);
      server.close(held.close?.code ?? 1011, held.close?.reason ?? "");
    }
    // Zero's client requires its Sec-WebSocket-Protocol echoed.
    const headers: Record<string, string> = upgrade.protocol
      ? { "sec-websocket-protocol": upgrade.protocol }
      : {};
    return new Response(null, { status: 101, webSocket: client, headers });
  }

  /**
   * Restores, into `hub`, the connection of every open Zero socket this instance does not know
   * (after hibernation: all of them). A socket whose connection cannot be restored is told so
   * and closed; its client reconnects.
   */
  restore(hub: ZeroHub): void {
    this.restoredInto = hub;
    for (const ws of this.ctx.getWebSockets(ZERO_TAG)) {
      const tags = this.ctx.getTags(ws);
      if (!isZeroSocket(tags) || this.handlers.has(tags[1]!)) continue;
      if (ws.readyState !== WebSocket.READY_STATE_OPEN) continue;
      const state = (ws.deserializeAttachment() as ZeroAttachment | null)?.zero ?? null;
      try {
        if (state === null) throw new ZeroError("Internal", "the connection was not kept; reconnect");
        this.handlers.set(tags[1]!, hub.restore(state, this.socket(ws)));
      } catch (error) {
        const refusal =
          error instanceof ZeroError ? error : new ZeroError("Internal", "the server failed; reconnect");
        if (!(error instanceof ZeroError)) {
          this.logger.log("error", { msg: "restoring a zero connection failed", error: String(error) });
        }
        this.socket(ws).send(refusal.frame());
        ws.close(CLOSE_PROTOCOL_ERROR, refusal.kind);
      }
    }
  }

  /** Restores the sockets' connections once per hub (the hub of a new instance, or a new service's). */
  ready(hub: ZeroHub): void {
    if (this.restoredInto !== hub) this.restore(hub);
  }

  /**
   * A frame from a Zero socket, to its connection (restored into `hub` first if need be). One
   * larger than `maxFrameBytes` (the config's `maxBodyBytes`, as on Node; the platform's own
   * limit is far larger) closes the socket with 1009, on which the stock client stops and tells
   * its user why, instead of reconnecting to send it again.
   */
  message(ws: WebSocket, message: string | ArrayBuffer, hub: ZeroHub, maxFrameBytes: number): void {
    if (frameBytes(message, maxFrameBytes) > maxFrameBytes) {
      this.closed(ws);
      try {
        ws.close(CLOSE_MESSAGE_TOO_BIG, "message too big");
      } catch {
        // Closed already.
      }
      return;
    }
    const key = this.ctx.getTags(ws)[1]!;
    if (!this.handlers.has(key)) this.restore(hub);
    // Zero's frames are JSON text; a binary frame is passed on as text, and refused as such.
    this.handlers.get(key)?.receive(typeof message === "string" ? message : "\u0000binary");
  }

  /** The socket closed: its connection leaves the hub. */
  closed(ws: WebSocket): void {
    const key = this.ctx.getTags(ws)[1]!;
    this.handlers.get(key)?.socketClosed();
    this.handlers.delete(key);
  }

  private socket(ws: WebSocket): ZeroSocket {
    let kept = true;
    return {
      send: (frame) => {
        try {
          ws.send(frame);
        } catch {
          // A socket that closed meanwhile; its close handler tidies up.
        }
      },
      close: (code, reason) => {
        try {
          ws.close(code, reason);
        } catch {
          // Closed already.
        }
      },
      save: (state) => {
        const attachment: ZeroAttachment = { zero: state };
        // Past the platform's limit the state is not kept (local workerd does not enforce it, so
        // the bound is checked here, for the same behaviour everywhere): the connection works
        // while the object stays awake, and is closed for a reconnect once it wakes anew.
        const fits = encoder.encode(JSON.stringify(attachment)).length <= MAX_ATTACHMENT_BYTES;
        try {
          ws.serializeAttachment(fits ? attachment : { zero: null });
        } catch {
          ws.serializeAttachment({ zero: null } satisfies ZeroAttachment);
        }
        if (!fits && kept) {
          this.logger.log("warn", {
            msg: "a zero connection's state is too large to keep through hibernation",
            limit: MAX_ATTACHMENT_BYTES,
          });
        }
        kept = fits;
      },
    };
  }
}
