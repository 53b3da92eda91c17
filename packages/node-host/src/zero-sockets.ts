import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import {
  refusedZeroUpgrade,
  TooManySockets,
  ZERO_PACE,
  type ZeroSocketHandler,
  type ZeroUpgrade,
} from "@weir/host-core";
import { WebSocket, WebSocketServer } from "ws";
import { MessagePace } from "./message-pace.js";
import { closedAsSlow } from "./slow-reader.js";
import type { UserShare, UserSockets } from "./user-sockets.js";

interface Open {
  ws: WebSocket;
  alive: boolean;
}

/**
 * Zero's WebSockets over `ws`. The upgrade answers with the client's Sec-WebSocket-Protocol, as
 * Zero's client requires; frames go to host-core's connection in order (those that arrive while
 * it is being opened wait). A protocol-level ping every `heartbeatMs` drops vanished peers. A
 * socket holding more than `maxBufferedBytes` unsent is closed with 1013 (slow-reader.ts). A
 * user's sockets count toward their cap and share their pace (`users`); a connection past the cap
 * is refused with ServerOverloaded.
 */
export class WsZero {
  private readonly server: WebSocketServer;
  private readonly sockets = new Set<Open>();
  private readonly heartbeat: NodeJS.Timeout;

  /**
   * `maxFrameBytes` (the config's `maxBodyBytes`, as on the edge): a larger frame closes the
   * socket with 1009, on which the stock client stops and tells its user why, instead of
   * reconnecting to send it again.
   */
  constructor(
    heartbeatMs: number,
    private readonly maxBufferedBytes: number,
    maxFrameBytes: number,
    private readonly users: UserSockets,
  ) {
    this.server = new WebSocketServer({
      noServer: true,
      maxPayload: maxFrameBytes,
      // The client sends one value (its encoded initConnection and credential), which is echoed.
      handleProtocols: (protocols) => protocols.values().next().value ?? false,
    });
    this.heartbeat = setInterval(() => this.beat(), heartbeatMs);
    this.heartbeat.unref();
  }

  get total(): number {
    return this.sockets.size;
  }

  /** Bytes sent to the sockets that their clients have not read yet. */
  get unsentBytes(): number {
    let total = 0;
    for (const open of this.sockets) total += open.ws.bufferedAmount;
    return total;
  }

  accept(req: IncomingMessage, socket: Duplex, head: Buffer, upgrade: ZeroUpgrade): void {
    let share: UserShare | null = null;
    let accepted = upgrade;
    if (upgrade.userID !== null) {
      try {
        share = this.users.open(upgrade.userID);
        socket.once("close", share.release);
      } catch (error) {
        if (!(error instanceof TooManySockets)) throw error;
        accepted = refusedZeroUpgrade(upgrade.protocol, error);
      }
    }
    this.server.handleUpgrade(req, socket, head, (ws) => this.add(ws, socket, accepted, share));
  }

  /** Closes every socket with 1001 (going away). */
  close(): void {
    clearInterval(this.heartbeat);
    for (const open of this.sockets) open.ws.close(1001, "server closing");
    this.sockets.clear();
    this.server.close();
  }

  /** `socket`: the connection `ws` writes its frames to. */
  private add(ws: WebSocket, socket: Duplex, upgrade: ZeroUpgrade, share: UserShare | null): void {
    const open: Open = { ws, alive: true };
    this.sockets.add(open);
    let handler: ZeroSocketHandler | null = null;
    let waiting: string[] | null = [];
    let closed = false;
    ws.on("pong", () => {
      open.alive = true;
    });
    const pace = new MessagePace(ws, ZERO_PACE, share?.pace);
    ws.on("message", (data, isBinary) => {
      open.alive = true;
      // Past the pace the socket's reads pause; frames already read still count (each one may be
      // a push), unless the socket was closed for sending on.
      if (!pace.take() && ws.readyState !== WebSocket.OPEN) return;
      // Zero's frames are JSON text; a binary frame is passed on as text, and refused as such.
      const frame = isBinary ? "\u0000binary" : data.toString();
      if (waiting) waiting.push(frame);
      else handler?.receive(frame);
    });
    // On a frame past maxPayload (or one that breaks the protocol), ws has already started its
    // close with the matching code (1009, 1002, 1007) when it tells of the error: terminating here
    // would cut the socket before that close frame goes out, and the client would see 1006 and
    // reconnect. ws ends the socket itself once the close handshake is done or times out.
    ws.on("error", () => {});
    ws.on("close", () => {
      pace.stop();
      share?.release();
      closed = true;
      this.sockets.delete(open);
      handler?.socketClosed();
    });
    upgrade
      .open({
        send: (frame) => {
          if (!closedAsSlow(ws, this.maxBufferedBytes)) ws.send(frame);
        },
        // A poke's frames as one write: corked, the frames ws writes wait for the uncork.
        sendAll: (frames) => {
          if (closedAsSlow(ws, this.maxBufferedBytes)) return;
          socket.cork();
          try {
            for (const frame of frames) ws.send(frame);
          } finally {
            socket.uncork();
          }
        },
        close: (code, reason) => {
          ws.close(code, reason);
          pace.closed();
        },
      })
      .then(
        (opened) => {
          handler = opened;
          const frames = waiting ?? [];
          waiting = null;
          if (!opened) return;
          if (closed) {
            opened.socketClosed();
            return;
          }
          for (const frame of frames) opened.receive(frame);
        },
        () => ws.close(1011, "server error"),
      );
  }

  private beat(): void {
    for (const open of this.sockets) {
      if (!open.alive) {
        open.ws.terminate();
        continue;
      }
      open.alive = false;
      open.ws.ping();
    }
  }
}
