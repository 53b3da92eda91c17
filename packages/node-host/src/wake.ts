import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import type { Wake, WakeTarget } from "@weir/host-core";
import { type WebSocket, WebSocketServer } from "ws";
import { closedAsSlow } from "./slow-reader.js";

interface WakeSocket {
  id: number;
  ws: WebSocket;
  clientID: string;
  alive: boolean;
}

/** Hears of each wake socket that opens and closes (a namespace worker keeps their count). */
export interface WakeWatcher {
  opened(id: number, target: WakeTarget): void;
  closed(id: number, target: WakeTarget): void;
}

/**
 * Wake sockets over `ws`. The text `ping` is answered `pong`; a protocol-level ping every
 * `heartbeatMs` finds sockets whose peer vanished, which are then dropped. A socket holding more
 * than `maxBufferedBytes` unsent is closed with 1013 (slow-reader.ts).
 */
export class WsWake implements Wake {
  private readonly server = new WebSocketServer({ noServer: true, maxPayload: 1024 });
  private readonly sockets = new Map<string, Set<WakeSocket>>();
  private readonly heartbeat: NodeJS.Timeout;
  private nextId = 1;

  constructor(
    heartbeatMs: number,
    private readonly maxBufferedBytes: number,
    private readonly watcher?: WakeWatcher,
  ) {
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
      if (socket.clientID === exceptClientID || closedAsSlow(socket.ws, this.maxBufferedBytes)) continue;
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

  /** Bytes sent to the sockets that their clients have not read yet. */
  get unsentBytes(): number {
    let total = 0;
    for (const set of this.sockets.values()) for (const socket of set) total += socket.ws.bufferedAmount;
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
    const socket: WakeSocket = { id: this.nextId++, ws, clientID: target.clientID, alive: true };
    set.add(socket);
    this.watcher?.opened(socket.id, target);
    ws.on("pong", () => {
      socket.alive = true;
    });
    ws.on("message", (data, isBinary) => {
      socket.alive = true;
      if (!isBinary && data.toString() === "ping" && !closedAsSlow(ws, this.maxBufferedBytes))
        ws.send("pong");
    });
    ws.on("error", () => ws.terminate());
    ws.on("close", () => {
      if (set.delete(socket)) this.watcher?.closed(socket.id, target);
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
