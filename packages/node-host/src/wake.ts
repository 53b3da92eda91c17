import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import type { AudienceProbe } from "@weir/engine-wasm";
import {
  AudienceIndex,
  TooManySockets,
  WAKE_PACE,
  type Wake,
  type WakeAudience,
  type WakeTarget,
} from "@weir/host-core";
import { type WebSocket, WebSocketServer } from "ws";
import { writeRawAnswer } from "./http-bridge.js";
import { MessagePace } from "./message-pace.js";
import { closedAsSlow } from "./slow-reader.js";
import type { UserShare, UserSockets } from "./user-sockets.js";

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
 * than `maxBufferedBytes` unsent is closed with 1013 (slow-reader.ts). A user's sockets count
 * toward their cap and share their pace (`users`); an upgrade past the cap is answered 429.
 */
export class WsWake implements Wake {
  private readonly server = new WebSocketServer({ noServer: true, maxPayload: 1024 });
  /** By namespace: the sockets, indexed by what they must be woken for. */
  private readonly sockets = new Map<string, AudienceIndex<WakeSocket>>();
  private readonly heartbeat: NodeJS.Timeout;
  private nextId = 1;
  /** Every socket by its id, for the wakes a namespace worker chose (`sendTo`). */
  private readonly byId = new Map<number, WakeSocket>();

  constructor(
    heartbeatMs: number,
    private readonly maxBufferedBytes: number,
    private readonly users: UserSockets,
    private readonly watcher?: WakeWatcher,
  ) {
    this.heartbeat = setInterval(() => this.beat(), heartbeatMs);
    this.heartbeat.unref();
  }

  /** Takes over an upgrade host-core accepted as a wake socket for `target`. */
  accept(req: IncomingMessage, socket: Duplex, head: Buffer, target: WakeTarget): void {
    let share: UserShare;
    try {
      share = this.users.open(target.claims.userID);
    } catch (error) {
      if (!(error instanceof TooManySockets)) throw error;
      writeRawAnswer(socket, error.status, error.body(), error.headers);
      return;
    }
    socket.once("close", share.release);
    this.server.handleUpgrade(req, socket, head, (ws) => this.add(target, ws, share));
  }

  send(namespace: string, audience: WakeAudience, exceptClientID: string | null): number {
    const index = this.sockets.get(namespace);
    if (!index) return 0;
    let sent = 0;
    for (const socket of index.select(audience)) {
      if (socket.clientID === exceptClientID || closedAsSlow(socket.ws, this.maxBufferedBytes)) continue;
      socket.ws.send("wake");
      sent++;
    }
    return sent;
  }

  count(namespace: string): number {
    return this.sockets.get(namespace)?.size ?? 0;
  }

  /** Sends `wake` to these sockets (chosen by a namespace worker's `RelayedWake`). */
  sendTo(ids: readonly number[]): void {
    for (const id of ids) {
      const socket = this.byId.get(id);
      if (socket && !closedAsSlow(socket.ws, this.maxBufferedBytes)) socket.ws.send("wake");
    }
  }

  probes(namespace: string): ReadonlyMap<string, AudienceProbe> {
    return this.sockets.get(namespace)?.probes() ?? new Map();
  }

  get total(): number {
    let total = 0;
    for (const index of this.sockets.values()) total += index.size;
    return total;
  }

  /** Bytes sent to the sockets that their clients have not read yet. */
  get unsentBytes(): number {
    let total = 0;
    for (const index of this.sockets.values())
      for (const socket of index.all()) total += socket.ws.bufferedAmount;
    return total;
  }

  /** Closes every socket with 1001 (going away). */
  close(): void {
    clearInterval(this.heartbeat);
    for (const index of this.sockets.values())
      for (const socket of index.all()) socket.ws.close(1001, "server closing");
    this.sockets.clear();
    this.server.close();
  }

  private add(target: WakeTarget, ws: WebSocket, share: UserShare): void {
    let index = this.sockets.get(target.namespace);
    if (!index) {
      index = new AudienceIndex();
      this.sockets.set(target.namespace, index);
    }
    const socket: WakeSocket = { id: this.nextId++, ws, clientID: target.clientID, alive: true };
    index.add(socket, target.subscription);
    this.byId.set(socket.id, socket);
    this.watcher?.opened(socket.id, target);
    ws.on("pong", () => {
      socket.alive = true;
    });
    const pace = new MessagePace(ws, WAKE_PACE, share.pace);
    ws.on("message", (data, isBinary) => {
      socket.alive = true;
      // A message past the pace is dropped: it carries nothing but a ping.
      if (!pace.take()) return;
      if (!isBinary && data.toString() === "ping" && !closedAsSlow(ws, this.maxBufferedBytes))
        ws.send("pong");
    });
    ws.on("error", () => ws.terminate());
    ws.on("close", () => {
      pace.stop();
      share.release();
      this.byId.delete(socket.id);
      if (index.has(socket)) {
        index.remove(socket);
        this.watcher?.closed(socket.id, target);
      }
      if (index.size === 0 && this.sockets.get(target.namespace) === index)
        this.sockets.delete(target.namespace);
    });
  }

  private beat(): void {
    for (const index of this.sockets.values()) {
      for (const socket of index.all()) {
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
