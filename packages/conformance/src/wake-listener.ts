import WebSocket from "ws";
import type { ConformanceTarget } from "./target.js";

/** A wake socket that queues what it hears, so a test can wait for the next message. */
export class Listener {
  private readonly messages: string[] = [];
  private waiting: ((message: string) => void) | undefined;
  readonly ws: WebSocket;
  readonly opened: Promise<void>;

  constructor(url: string, authorization: string) {
    this.ws = new WebSocket(url, { headers: { authorization } });
    this.opened = new Promise((resolve, reject) => {
      this.ws.once("open", () => resolve());
      this.ws.once("error", reject);
      this.ws.once("unexpected-response", (_req, res) => reject(new Error(`status ${res.statusCode}`)));
    });
    this.ws.on("message", (data) => {
      const text = data.toString();
      if (this.waiting) {
        const resolve = this.waiting;
        this.waiting = undefined;
        resolve(text);
      } else this.messages.push(text);
    });
  }

  next(): Promise<string> {
    const queued = this.messages.shift();
    if (queued !== undefined) return Promise.resolve(queued);
    return new Promise((resolve) => {
      this.waiting = resolve;
    });
  }

  /**
   * Whether the socket was sent nothing: a `wake` for a commit would have been sent before the
   * socket's `pong` (a round's wakes go out together, before the test's next step), so the next
   * message after a ping is the pong only if no wake came.
   */
  async heardNothing(): Promise<boolean> {
    this.ws.send("ping");
    return (await this.next()) === "pong";
  }

  close(): void {
    this.ws.close();
  }
}

export function wakeUrl(target: ConformanceTarget, ns: string, clientID: string): string {
  return `${target.url.replace(/^http/, "ws")}/${ns}/wake?clientID=${encodeURIComponent(clientID)}`;
}

/** An open wake socket, counting the `pong`s it hears. */
export interface OpenWake {
  ws: WebSocket;
  pongs(): number;
}

/** A refused wake upgrade: its status and body. */
export interface RefusedWake {
  status: number;
  body: string;
}

/** Opens a wake socket of `user` into `ns` at `url`: open, or the status and body of its refused upgrade. */
export function wakeSocket(
  url: string,
  ns: string,
  user: string,
  clientID: string,
): Promise<OpenWake | RefusedWake> {
  const ws = new WebSocket(
    `${url.replace(/^http/, "ws")}/${ns}/wake?clientID=${encodeURIComponent(clientID)}`,
    {
      headers: { authorization: user },
    },
  );
  let pongs = 0;
  ws.on("message", (data) => {
    if (String(data) === "pong") pongs++;
  });
  return new Promise((resolve, reject) => {
    ws.once("open", () => resolve({ ws, pongs: () => pongs }));
    ws.once("unexpected-response", (_req, res) => {
      let body = "";
      res.on("data", (chunk: Buffer) => {
        body += chunk.toString();
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    ws.once("error", reject);
  });
}
