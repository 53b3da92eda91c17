import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import type { ZeroSocketHandler, ZeroUpgrade } from "@weir/host-core";
import { type WebSocket, WebSocketServer } from "ws";
import { closedAsSlow } from "./slow-reader.js";

/** Frames larger than this close the socket with 1009 (the client tells its user why). */
const MAX_FRAME_BYTES = 4 * 1024 * 1024;

interface Open {
  ws: WebSocket;
  alive: boolean;
}

/**
 * Zero's WebSockets over `ws`. The upgrade answers with the client's Sec-WebSocket-Protocol, as
 * Zero's client requires; frames go to host-core's connection in order (those that arrive while
 * it is being opened wait). A protocol-level ping every `heartbeatMs` drops vanished peers. A
 * socket holding more than `maxBufferedBytes` unsent is closed with 1013 (slow-reader.ts).
 */
export class WsZero {
  private readonly server = new WebSocketServer({
    noServer: true,
    maxPayload: MAX_FRAME_BYTES,
    // The client sends one value (its encoded initConnection and credential), which is echoed.
    handleProtocols: (protocols) => protocols.values().next().value ?? false,
  });
  private readonly sockets = new Set<Open>();
  private readonly heartbeat: NodeJS.Timeout;

  constructor(
    heartbeatMs: number,
    private readonly maxBufferedBytes: number,
  ) {
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
    this.server.handleUpgrade(req, socket, head, (ws) => this.add(ws, socket, upgrade));
  }

  /** Closes every socket with 1001 (going away). */
  close(): void {
    clearInterval(this.heartbeat);
    for (const open of this.sockets) open.ws.close(1001, "server closing");
    this.sockets.clear();
    this.server.close();
  }

  /** `socket`: the connection `ws` writes its frames to. */
  private add(ws: WebSocket, socket: Duplex, upgrade: ZeroUpgrade): void {
    const open: Open = { ws, alive: true };
    this.sockets.add(open);
    let handler: ZeroSocketHandler | null = null;
    let waiting: string[] | null = [];
    let closed = false;
    ws.on("pong", () => {
      open.alive = true;
    });
    ws.on("message", (data, isBinary) => {
      open.alive = true;
      // Zero's frames are JSON text; a binary frame is passed on as text, and refused as such.
      const frame = isBinary ? "\u0000binary" : data.toString();
      if (waiting) waiting.push(frame);
      else handler?.receive(frame);
    });
    ws.on("error", () => ws.terminate());
    ws.on("close", () => {
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
        close: (code, reason) => ws.close(code, reason),
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
