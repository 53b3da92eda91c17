import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import type { Wake, WakeTarget } from "@weir/host-core";
import { WebSocket, WebSocketServer } from "ws";

interface WakeSocket {
  ws: WebSocket;
  clientID: string;
  alive: boolean;
}

/**
 * Wake sockets over `ws`. The text `ping` is answered `pong`; a protocol-level ping every
 * `heartbeatMs` finds sockets whose peer vanished, which are then dropped.
 */
export class WsWake implements Wake {
  private readonly server = new WebSocketServer({ noServer: true, maxPayload: 1024 });
  private readonly sockets = new Map<string, Set<WakeSocket>>();
  private readonly heartbeat: NodeJS.Timeout;

  constructor(heartbeatMs: number) {
    this.heartbeat = setInterval(() => this.beat(), heartbeatMs);
    this.heartbeat.unref();
  }

  /** Takes over an upgrade host-core accepted as a wake socket for `target`. */
  accept(req: IncomingMessage, socket: Duplex, head: Buffer, target: WakeTarget): void {
    this.server.handleUpgrade(req, socket, head, (ws) => this.add(target, ws));
  }

  send(namespace: string, exceptClientID: string | null): number {
    let sent = 0;
    for (const socket of this.sockets.get(namespace) ?? []) {
      if (socket.clientID === exceptClientID || socket.ws.readyState !== WebSocket.OPEN) continue;
      socket.ws.send("wake");
      sent++;
    }
    return sent;
  }

  count(namespace: string): number {
    return this.sockets.get(namespace)?.size ?? 0;
  }

  get total(): number {
    let total = 0;
    for (const set of this.sockets.values()) total += set.size;
    return total;
  }

  /** Closes every socket with 1001 (going away). */
  close(): void {
    clearInterval(this.heartbeat);
    for (const set of this.sockets.values())
      for (const socket of set) socket.ws.close(1001, "server closing");
    this.sockets.clear();
    this.server.close();
  }

  private add(target: WakeTarget, ws: WebSocket): void {
    let set = this.sockets.get(target.namespace);
    if (!set) {
      set = new Set();
      this.sockets.set(target.namespace, set);
    }
    const socket: WakeSocket = { ws, clientID: target.clientID, alive: true };
    set.add(socket);
    ws.on("pong", () => {
      socket.alive = true;
    });
    ws.on("message", (data, isBinary) => {
      socket.alive = true;
      if (!isBinary && data.toString() === "ping") ws.send("pong");
    });
    ws.on("error", () => ws.terminate());
    ws.on("close", () => {
      set.delete(socket);
      if (set.size === 0 && this.sockets.get(target.namespace) === set) this.sockets.delete(target.namespace);
    });
  }

  private beat(): void {
    for (const set of this.sockets.values()) {
      for (const socket of set) {
        if (!socket.alive) {
          socket.ws.terminate();
          continue;
        }
        socket.alive = false;
        socket.ws.ping();
      }
    }
  }
}
